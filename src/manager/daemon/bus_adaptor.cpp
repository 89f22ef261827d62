// Manager1 and Task1 on the bus (bus_adaptor.hpp): each method converts its
// arguments, asks the registry, and converts the answer or the error.
#include "manager/daemon/bus_adaptor.hpp"

#include "common/bus_error.hpp"
#include "common/cpu_list.hpp"
#include "common/sdbus_compat.hpp"
#include "scope/resources.hpp"
#include "scope/slice_weights.hpp"
#include "spec/task_spec.hpp"
#include "wire/task_json.hpp"

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

TaskRegistry::Done replyWhenDone(sdbus::Result<>&& result) {
    return [reply = replyLater(std::move(result))](common::Result<void> r) {
        if (!r) return reply->returnError(common::toBusError(r.error()));
        reply->returnResults();
    };
}

// A flat task's slice, from its cgroup ("/nomad.slice/a-t.scope"): the
// level above its scope, as systemd placed it.
std::string parentSlice(const std::string& cgroup) {
    const auto last = cgroup.rfind('/');
    if (last == std::string::npos || last == 0) return {};
    const auto before = cgroup.rfind('/', last - 1);
    auto name = cgroup.substr(before + 1, last - before - 1);
    if (name.size() <= 6 || name.substr(name.size() - 6) != ".slice") return {};
    return name;
}

// What GetTask's "slice" and "alloc_slice" and Task1's Slice and AllocSlice
// say: a record of a flat task names no slice, its cgroup does.
std::string sliceOf(const TaskRecord& r) { return r.slice.empty() ? parentSlice(r.cgroup) : r.slice; }
std::string allocationSliceOf(const TaskRecord& r) { return r.allocSlice.empty() ? r.slice : r.allocSlice; }

// Its weight among its allocation's tasks, and where it is: a task alone in
// its allocation leaves it to the allocation's slice (issue 49).
uint64_t cpuWeightOf(const TaskRecord& r) {
    const auto& shares = r.spec.resources.cpuShares;
    return shares ? scope::cpuWeightFromShares(*shares) : scope::kCpuWeightDefault;
}
std::string cpuWeightUnitOf(const TaskRecord& r) {
    return r.weightOnScope || r.slice.empty() ? r.unit : allocationSliceOf(r);
}

}  // namespace

std::string taskJson(const TaskRecord& r, SpecView view) {
    wire::TaskInfo t;
    t.allocId = r.allocId;
    t.task = r.name;
    t.unit = r.unit;
    t.objectPath = r.objectPath;
    t.state = toString(r.state);
    t.pid = r.pid;
    t.shimPid = r.finished() ? 0 : r.shimPid;
    t.cgroup = r.cgroup;
    t.allocSlice = allocationSliceOf(r);
    t.slice = sliceOf(r);
    t.processSpec = r.finished() ? std::string() : r.processSpec;
    t.cpus = common::formatCpuList(r.cpus);
    t.reservedCores = r.reservedCores;
    t.cpuWeight = cpuWeightOf(r);
    t.cpuWeightUnit = cpuWeightUnitOf(r);
    if (r.finished()) t.exitCode = r.exit.exitCode;
    t.signal = r.exit.signal;
    t.oomKilled = r.exit.oomKilled;
    t.startedAt = formatTime(r.startedAtUs);
    t.finishedAt = formatTime(r.exit.finishedAtUs);
    t.lostReason = r.lostReason;
    if (r.exit.execError) t.execError = r.exit.execErrorStep + ": errno " + std::to_string(r.exit.execError);
    t.spec = view == SpecView::Full ? r.spec : spec::redacted(r.spec);
    return wire::toJson(t);
}

TaskObject::TaskObject(sdbus::IConnection& connection, const TaskRecord& record)
    : AdaptorInterfaces(connection, sdbus::ObjectPath{record.objectPath}), record_(record) {
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

std::string TaskObject::Slice() { return sliceOf(record_); }

std::string TaskObject::AllocSlice() { return allocationSliceOf(record_); }

uint64_t TaskObject::CPUWeight() { return cpuWeightOf(record_); }

std::string TaskObject::CPUWeightUnit() { return cpuWeightUnitOf(record_); }

void TaskObject::changed() {
    sdbus_compat::emitPropertiesChanged(
        getObject(), org::taskscope::Task1_adaptor::INTERFACE_NAME,
        {"State", "MainPID", "ControlGroup", "Slice", "AllowedCPUs", "ReservedCores", "CPUWeight", "CPUWeightUnit",
         "ExitCode", "Signal", "OOMKilled", "FinishedAt", "Spec"});
}

ManagerObject::ManagerObject(sdbus::IConnection& connection, TaskRegistry& tasks, network::NetworkManager& networks,
                             NodeFacts facts)
    : AdaptorInterfaces(connection, sdbus::ObjectPath{kManagerPath}),
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
    emitTaskStarted(task.allocId, task.name, sdbus::ObjectPath{task.objectPath}, static_cast<uint32_t>(task.pid));
    emitTaskStateChanged(task.allocId, task.name, toString(task.state));
}

void ManagerObject::taskChanged(const TaskRecord& task) {
    if (auto it = objects_.find(task.unit); it != objects_.end()) it->second->changed();
    sdbus_compat::emitPropertiesChanged(getObject(), org::taskscope::Manager1_adaptor::INTERFACE_NAME, {"SharedCPUs"});
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

void ManagerObject::taskStartFailed(const TaskRecord& task, const std::string& errorName) {
    // The name as StartTask's caller got it (toBusError's).
    emitTaskStartFailed(task.allocId, task.name, common::busErrorName(errorName.c_str()));
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

void ManagerObject::SignalTask(sdbus::Result<>&& result, std::string allocId, std::string task, std::string signal) {
    tasks_.signal(allocId, task, signal, replyWhenDone(std::move(result)));
}

bool ManagerObject::callerIsRoot() {
    std::string sender;
    std::optional<uid_t> uid;
    const bool inCall = sdbus_compat::withCurrentMessage(getObject(), [&](const sdbus::Message& msg) {
        sender = sdbus_compat::senderOf(msg);
        if (auto it = callerUids_.find(sender); !sender.empty() && it != callerUids_.end()) {
            uid = it->second;
            return;
        }
        try {
            uid = msg.getCredsEuid();
        } catch (const sdbus::Error&) {
            // unknown caller: the redacted view (and asked again next time)
        }
    });
    if (!inCall || !uid) return false;
    // Bounded: names of connections long gone are dropped all at once.
    if (callerUids_.size() >= kCallerUidsKept) callerUids_.clear();
    if (!sender.empty()) callerUids_.emplace(sender, *uid);
    return *uid == 0;
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
