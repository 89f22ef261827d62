#include "task/task_record.hpp"

#include <ctime>

#include "common/cpu_list.hpp"
#include "common/error_names.hpp"
#include "spec/json_text.hpp"

namespace taskscope::task {

std::string formatTime(uint64_t us) {
    if (us == 0) return "";
    const time_t secs = static_cast<time_t>(us / 1000000);
    tm t{};
    gmtime_r(&secs, &t);
    char buf[64];
    const size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &t);
    char frac[16];
    snprintf(frac, sizeof frac, ".%06lluZ", static_cast<unsigned long long>(us % 1000000));
    return std::string(buf, n) + frac;
}

nlohmann::json toJson(const TaskRecord& r) {
    nlohmann::json j = {
        {"alloc_id", r.allocId},
        {"task", r.name},
        {"unit", r.unit},
        {"spec", r.specText},
        {"state", toString(r.state)},
        {"pid", r.pid},
        {"shim_pid", r.shimPid},
        {"cgroup", r.cgroup},
        {"process_spec", r.processSpec},
        {"cpus", common::formatCpuList(r.cpus)},
        {"reserved_cores", r.reservedCores},
        {"started_at_us", r.startedAtUs},
        {"exit_code", r.exit.exitCode},
        {"signal", r.exit.signal},
        {"oom_killed", r.exit.oomKilled},
        {"finished_at_us", r.exit.finishedAtUs},
        {"exec_error", r.exit.execError},
        {"exec_error_step", r.exit.execErrorStep},
        {"exit_reported", r.exitReported},
        {"kill_deadline_us", r.killDeadlineUs},
        {"lost_reason", r.lostReason},
    };
    // Only in the nested layout: a record without it is a flat task (in
    // the configured slice), also one an older manager wrote.
    if (!r.slice.empty()) j["slice"] = r.slice;
    if (!r.allocSlice.empty()) j["alloc_slice"] = r.allocSlice;
    // Only while its allocation's slice carries its weight: a record
    // without it (also an older manager's, which put every weight on its
    // scope) has it on its scope.
    if (!r.weightOnScope) j["weight_on_scope"] = false;
    // Only while a stop waits its turn.
    if (r.queuedStopSignal) {
        j["queued_stop_signal"] = r.queuedStopSignal;
        j["queued_stop_grace_ms"] = r.queuedStopGraceMs;
    }
    return j;
}

common::Result<TaskRecord> recordFromJson(const nlohmann::json& j) {
    try {
        TaskRecord r;
        r.allocId = j.at("alloc_id").get<std::string>();
        r.name = j.at("task").get<std::string>();
        r.unit = j.at("unit").get<std::string>();
        r.specText = j.at("spec").get<std::string>();
        // Checked when it was accepted, by this version or an older one;
        // read leniently, so that a field only a newer one knows costs no task.
        auto specJson = spec::parseJson(r.specText, "task spec");
        if (!specJson) return common::makeError(common::errors::kInternal, specJson.error().message);
        auto spec = spec::taskSpecFromJson(*specJson, spec::Strictness::Lenient);
        if (!spec) return common::makeError(common::errors::kInternal, "task spec: " + spec.error().message);
        r.spec = std::move(*spec);
        const auto stateName = j.at("state").get<std::string>();
        const auto state = wire::parseTaskState(stateName);
        // A state only a newer taskscope knows (a downgrade): the task is
        // kept, as lost, with the reason, rather than the record refused.
        r.state = state ? *state : wire::TaskState::Lost;
        r.pid = spec::numberAt<pid_t>(j, "pid");
        r.shimPid = spec::numberAt<pid_t>(j, "shim_pid");
        r.cgroup = j.at("cgroup").get<std::string>();
        r.processSpec = j.value("process_spec", std::string());
        r.slice = j.value("slice", std::string());
        r.allocSlice = j.value("alloc_slice", r.slice);
        r.weightOnScope = j.value("weight_on_scope", true);
        r.startedAtUs = spec::numberAt<uint64_t>(j, "started_at_us");
        auto cpus = common::parseCpuList(j.value("cpus", ""));
        if (!cpus) return cpus.error().context("task record cpus");
        r.cpus = *cpus;
        r.reservedCores = j.value("reserved_cores", false);
        r.exit.exitCode = spec::numberAt<int>(j, "exit_code");
        r.exit.signal = spec::numberAt<int>(j, "signal");
        r.exit.oomKilled = j.at("oom_killed").get<bool>();
        r.exit.finishedAtUs = spec::numberAt<uint64_t>(j, "finished_at_us");
        r.exit.execError = spec::numberOr(j, "exec_error", 0);
        r.exit.execErrorStep = j.value("exec_error_step", "");
        r.exitReported = j.at("exit_reported").get<bool>();
        r.killDeadlineUs = spec::numberOr(j, "kill_deadline_us", uint64_t{0});  // absent in records of 0.1.0 before it
        r.lostReason = j.value("lost_reason", "");
        if (!state)
            r.lostReason = "its record, written by a newer taskscope, says \"" + stateName +
                           "\", a state this one does not know";
        r.queuedStopSignal = spec::numberOr(j, "queued_stop_signal", 0);
        r.queuedStopGraceMs = spec::numberOr(j, "queued_stop_grace_ms", int64_t{0});
        return r;
    } catch (const nlohmann::json::exception& e) {
        return common::makeError(common::errors::kInternal, std::string("task record: ") + e.what());
    } catch (const std::invalid_argument& e) {
        return common::makeError(common::errors::kInternal, std::string("task record: ") + e.what());
    }
}

}  // namespace taskscope::task
