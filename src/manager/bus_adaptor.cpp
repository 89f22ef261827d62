#include "manager/bus_adaptor.hpp"

#include <nlohmann/json.hpp>

#include "common/bus_error.hpp"
#include "common/cpu_list.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::manager {

namespace {

using common::unwrapForBus;
using task::formatTime;

constexpr size_t kCallerUidsKept = 4096;

// The reply to an asynchronous call, as a completion: sdbus::Result moves
// only, and completions are copied.
template <class... Out>
std::shared_ptr<sdbus::Result<Out...>> replyLater(sdbus::Result<Out...>&& result) {
    return std::make_shared<sdbus::Result<Out...>>(std::move(result));
}

TaskManager::Done replyWhenDone(sdbus::Result<>&& result) {
    return [reply = replyLater(std::move(result))](common::Result<void> r) {
        if (!r) return reply->returnError(common::toBusError(r.error()));
        reply->returnResults();
    };
}

}  // namespace

std::string taskJson(const TaskRecord& r, SpecView view) {
    nlohmann::json j = {
        {"alloc_id", r.allocId},
        {"task", r.name},
        {"unit", r.unit},
        {"object_path", r.objectPath},
        {"state", toString(r.state)},
        {"pid", r.pid},
        {"shim_pid", r.finished() ? 0 : r.shimPid},
        {"cgroup", r.cgroup},
        {"process_spec", r.finished() ? std::string() : r.processSpec},
        {"cpus", common::formatCpuList(r.cpus)},
        {"reserved_cores", r.reservedCores},
        {"exit_code", r.finished() ? nlohmann::json(r.exit.exitCode) : nlohmann::json(nullptr)},
        {"signal", r.exit.signal},
        {"oom_killed", r.exit.oomKilled},
        {"started_at", formatTime(r.startedAtUs)},
        {"finished_at", formatTime(r.exit.finishedAtUs)},
        {"spec", spec::toJson(view == SpecView::Full ? r.spec : spec::redacted(r.spec))},
    };
    if (!r.lostReason.empty()) j["lost_reason"] = r.lostReason;
    if (r.exit.execError) j["exec_error"] = r.exit.execErrorStep + ": errno " + std::to_string(r.exit.execError);
    return j.dump();
}

TaskObject::TaskObject(sdbus::IConnection& connection, const TaskRecord& record)
    : AdaptorInterfaces(connection, record.objectPath), record_(record) {
    registerAdaptor();
}

TaskObject::~TaskObject() { unregisterAdaptor(); }

std::string TaskObject::Spec() {
    if (redacted_.empty() || redactedFrom_ != record_.specText) {
        redacted_ = spec::toText(spec::redacted(record_.spec));
        redactedFrom_ = record_.specText;
    }
    return redacted_;
}

std::string TaskObject::AllowedCPUs() { return common::formatCpuList(record_.cpus); }

void TaskObject::changed() {
    emitPropertiesChangedSignal(org::taskscope::Task1_adaptor::INTERFACE_NAME,
                                {"State", "MainPID", "ControlGroup", "AllowedCPUs", "ReservedCores", "ExitCode",
                                 "Signal", "OOMKilled", "FinishedAt", "Spec"});
}

ManagerObject::ManagerObject(sdbus::IConnection& connection, TaskManager& tasks, network::NetworkManager& networks,
                             NodeFacts facts)
    : AdaptorInterfaces(connection, kManagerPath),
      connection_(connection),
      tasks_(tasks),
      networks_(networks),
      facts_(std::move(facts)) {
    // Objects of tasks that existed before this instance started are
    // published with the manager, before the bus name is taken.
    for (const auto* r : tasks_.list()) objects_[r->unit] = std::make_unique<TaskObject>(connection_, *r);
    registerAdaptor();
}

ManagerObject::~ManagerObject() { unregisterAdaptor(); }

void ManagerObject::taskAdded(const TaskRecord& task) {
    auto obj = std::make_unique<TaskObject>(connection_, task);
    obj->emitInterfacesAddedSignal();
    objects_[task.unit] = std::move(obj);
    emitTaskStarted(task.allocId, task.name, task.objectPath, static_cast<uint32_t>(task.pid));
    emitTaskStateChanged(task.allocId, task.name, toString(task.state));
}

void ManagerObject::taskChanged(const TaskRecord& task) {
    if (auto it = objects_.find(task.unit); it != objects_.end()) it->second->changed();
    emitPropertiesChangedSignal(org::taskscope::Manager1_adaptor::INTERFACE_NAME, {"SharedCPUs"});
    emitTaskStateChanged(task.allocId, task.name, toString(task.state));
}

void ManagerObject::taskExited(const TaskRecord& task) {
    emitTaskExited(task.allocId, task.name, task.exit.exitCode, task.exit.signal, task.exit.oomKilled);
}

void ManagerObject::taskRemoved(const TaskRecord& task) {
    if (auto it = objects_.find(task.unit); it != objects_.end()) {
        it->second->emitInterfacesRemovedSignal();
        objects_.erase(it);
    }
}

void ManagerObject::StartTask(sdbus::Result<sdbus::ObjectPath>&& result, std::string allocId, std::string task,
                              std::string specJson) {
    tasks_.start(allocId, task, specJson, [reply = replyLater(std::move(result))](common::Result<const TaskRecord*> r) {
        if (!r) return reply->returnError(common::toBusError(r.error()));
        reply->returnResults(sdbus::ObjectPath((*r)->objectPath));
    });
}

void ManagerObject::StopTask(sdbus::Result<>&& result, std::string allocId, std::string task, std::string signal,
                             int64_t graceMs) {
    tasks_.stop(allocId, task, signal, graceMs, replyWhenDone(std::move(result)));
}

void ManagerObject::SignalTask(const std::string& allocId, const std::string& task, const std::string& signal) {
    unwrapForBus(tasks_.signal(allocId, task, signal));
}

bool ManagerObject::callerIsRoot() {
    const auto* msg = getObject().getCurrentlyProcessedMessage();
    if (!msg) return false;
    const std::string sender = msg->getSender();
    if (auto it = callerUids_.find(sender); !sender.empty() && it != callerUids_.end()) return it->second == 0;
    uid_t uid;
    try {
        uid = msg->getCredsEuid();
    } catch (const sdbus::Error&) {
        return false;  // unknown caller: the redacted view (and asked again next time)
    }
    // Bounded: names of connections long gone are dropped all at once.
    if (callerUids_.size() >= kCallerUidsKept) callerUids_.clear();
    if (!sender.empty()) callerUids_.emplace(sender, uid);
    return uid == 0;
}

std::string ManagerObject::GetTask(const std::string& allocId, const std::string& task) {
    const auto* r = unwrapForBus(tasks_.get(allocId, task));
    return taskJson(*r, callerIsRoot() ? SpecView::Full : SpecView::Redacted);
}

std::string ManagerObject::GetTaskSpec(const std::string& allocId, const std::string& task) {
    // The bus policy lets only root call this; the check here holds on a bus
    // whose policy does not.
    if (!callerIsRoot())
        throw common::toBusError(common::makeError(common::errors::kPermissionDenied, "GetTaskSpec is for root only"));
    return unwrapForBus(tasks_.get(allocId, task))->specText;
}

std::vector<sdbus::Struct<std::string, std::string, std::string, sdbus::ObjectPath>> ManagerObject::ListTasks() {
    std::vector<sdbus::Struct<std::string, std::string, std::string, sdbus::ObjectPath>> out;
    for (const auto* r : tasks_.list()) out.emplace_back(r->allocId, r->name, toString(r->state), r->objectPath);
    return out;
}

void ManagerObject::UpdateTask(sdbus::Result<>&& result, std::string allocId, std::string task,
                               std::string resourcesJson) {
    tasks_.update(allocId, task, resourcesJson, replyWhenDone(std::move(result)));
}

void ManagerObject::CreateNetwork(sdbus::Result<>&& result, std::string allocId, std::string specJson) {
    networks_.create(allocId, specJson, replyWhenDone(std::move(result)));
}

void ManagerObject::DestroyNetwork(sdbus::Result<>&& result, std::string allocId) {
    networks_.destroy(allocId, replyWhenDone(std::move(result)));
}

std::string ManagerObject::GetNetwork(const std::string& allocId) { return unwrapForBus(networks_.get(allocId)); }

std::vector<sdbus::Struct<std::string, std::string, std::string>> ManagerObject::ListNetworks() {
    std::vector<sdbus::Struct<std::string, std::string, std::string>> out;
    for (const auto& [alloc, mode, path] : networks_.list()) out.emplace_back(alloc, mode, path);
    return out;
}

void ManagerObject::ForgetTask(sdbus::Result<>&& result, std::string allocId, std::string task) {
    tasks_.forget(allocId, task, replyWhenDone(std::move(result)));
}

}  // namespace taskscope::manager
