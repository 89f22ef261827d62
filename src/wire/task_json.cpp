#include "wire/task_json.hpp"

#include <nlohmann/json.hpp>

#include "common/error_names.hpp"
#include "spec/json_text.hpp"
#include "wire/field_names.hpp"

namespace taskscope::wire {

namespace {

using field::kAllocId;
using field::kTask;
constexpr const char* kUnit = "unit";
constexpr const char* kObjectPath = "object_path";
constexpr const char* kState = "state";
constexpr const char* kPid = "pid";
constexpr const char* kShimPid = "shim_pid";
constexpr const char* kCgroup = "cgroup";
constexpr const char* kProcessSpec = "process_spec";
constexpr const char* kSlice = "slice";
constexpr const char* kAllocSlice = "alloc_slice";
constexpr const char* kCpus = "cpus";
constexpr const char* kReservedCores = "reserved_cores";
constexpr const char* kCpuWeight = "cpu_weight";
constexpr const char* kCpuWeightUnit = "cpu_weight_unit";
constexpr const char* kExitCode = "exit_code";
constexpr const char* kSignal = "signal";
constexpr const char* kOomKilled = "oom_killed";
constexpr const char* kStartedAt = "started_at";
constexpr const char* kFinishedAt = "finished_at";
constexpr const char* kLostReason = "lost_reason";
constexpr const char* kExecError = "exec_error";
constexpr const char* kSpec = "spec";

common::Error malformed(const std::string& why) {
    return common::makeError(common::errors::kInternal, "the manager's task description " + why);
}

}  // namespace

std::string toJson(const TaskInfo& t) {
    nlohmann::json j = {
        {kAllocId, t.allocId},
        {kTask, t.task},
        {kUnit, t.unit},
        {kObjectPath, t.objectPath},
        {kState, t.state},
        {kPid, t.pid},
        {kShimPid, t.shimPid},
        {kCgroup, t.cgroup},
        {kSlice, t.slice},
        {kAllocSlice, t.allocSlice},
        {kProcessSpec, t.processSpec},
        {kCpus, t.cpus},
        {kReservedCores, t.reservedCores},
        {kCpuWeight, t.cpuWeight},
        {kCpuWeightUnit, t.cpuWeightUnit},
        {kExitCode, t.exitCode ? nlohmann::json(*t.exitCode) : nlohmann::json(nullptr)},
        {kSignal, t.signal},
        {kOomKilled, t.oomKilled},
        {kStartedAt, t.startedAt},
        {kFinishedAt, t.finishedAt},
        {kSpec, t.spec ? spec::toJson(*t.spec) : nlohmann::json(nullptr)},
    };
    if (!t.lostReason.empty()) j[kLostReason] = t.lostReason;
    if (!t.execError.empty()) j[kExecError] = t.execError;
    return j.dump();
}

common::Result<TaskInfo> parseTaskJson(std::string_view json) {
    const auto parsed = spec::parseJson(json, "the manager's task description");
    if (!parsed) return common::makeError(common::errors::kInternal, parsed.error().message);
    const auto& j = *parsed;
    if (!j.is_object()) return malformed("is not a JSON object");
    try {
        TaskInfo t;
        t.allocId = j.value(kAllocId, std::string());
        t.task = j.value(kTask, std::string());
        t.objectPath = j.value(kObjectPath, std::string());
        t.state = j.at(kState).get<std::string>();
        t.pid = spec::numberAt<int64_t>(j, kPid);
        t.unit = j.at(kUnit).get<std::string>();
        t.cgroup = j.at(kCgroup).get<std::string>();
        t.shimPid = spec::numberOr(j, kShimPid, int64_t{0});
        t.slice = j.value(kSlice, std::string());
        t.allocSlice = j.value(kAllocSlice, std::string());
        t.processSpec = j.value(kProcessSpec, std::string());
        t.cpus = j.value(kCpus, std::string());
        t.reservedCores = j.value(kReservedCores, false);
        t.cpuWeight = spec::numberOr(j, kCpuWeight, uint64_t{0});
        t.cpuWeightUnit = j.value(kCpuWeightUnit, std::string());
        if (j.contains(kExitCode) && j.at(kExitCode).is_number()) t.exitCode = spec::numberAt<int>(j, kExitCode);
        t.signal = spec::numberOr(j, kSignal, 0);
        t.oomKilled = j.value(kOomKilled, false);
        t.startedAt = j.value(kStartedAt, std::string());
        t.finishedAt = j.value(kFinishedAt, std::string());
        t.lostReason = j.value(kLostReason, std::string());
        t.execError = j.value(kExecError, std::string());
        auto spec = j.at(kSpec);
        if (spec.is_string()) {
            // A stored spec that does not read leaves the task without one.
            auto inner = spec::parseJson(spec.get<std::string>(), "its spec");
            spec = inner ? std::move(*inner) : nlohmann::json();
        }
        if (spec.is_object()) {
            auto s = spec::taskSpecFromJson(spec, spec::Strictness::Lenient);
            if (!s) return malformed("has a malformed spec: " + s.error().message);
            t.spec = std::move(*s);
        }
        return t;
    } catch (const nlohmann::json::exception& e) {
        return malformed(std::string("is malformed: ") + e.what());
    } catch (const std::invalid_argument& e) {
        return malformed(std::string("is malformed: ") + e.what());
    }
}

}  // namespace taskscope::wire
