#include "stream/exec/exec_request.hpp"

#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <cerrno>

#include "common/default_path.hpp"
#include "common/error_names.hpp"
#include "scope/cgroup_host.hpp"

namespace taskscope::stream::exec {

namespace {

using common::makeError;
using common::Result;

// The PATH the manager gives a task whose spec sets none.
using common::kDefaultPath;

common::Error invalid(std::string message) {
    return makeError(common::errors::kInvalidArgument, std::move(message));
}

}  // namespace

Result<void> validateCommand(const std::vector<std::string>& command) {
    if (command.empty() || command[0].empty()) return invalid("the command is empty");
    if (command.size() > kMaxCommandArgs)
        return invalid("the command has " + std::to_string(command.size()) + " strings, more than " +
                       std::to_string(kMaxCommandArgs));
    size_t bytes = 0;
    for (const auto& a : command) bytes += a.size() + 1;
    if (bytes > kMaxCommandBytes)
        return invalid("the command is " + std::to_string(bytes) + " bytes long, more than " +
                       std::to_string(kMaxCommandBytes));
    return {};
}

Result<void> validateEnv(const std::map<std::string, std::string>& env) {
    if (env.size() > kMaxEnvVars)
        return invalid(std::to_string(env.size()) + " environment variables, more than " + std::to_string(kMaxEnvVars));
    size_t bytes = 0;
    for (const auto& [k, v] : env) {
        if (k.empty() || k.find('=') != std::string::npos)
            return invalid("environment variable name '" + k + "' is not valid");
        bytes += k.size() + v.size() + 2;
    }
    if (bytes > kMaxCommandBytes)
        return invalid("the environment is " + std::to_string(bytes) + " bytes long, more than " +
                       std::to_string(kMaxCommandBytes));
    return {};
}

Result<void> validateWindow(uint32_t rows, uint32_t cols) {
    if (rows < 1 || rows > kMaxWindowDim || cols < 1 || cols > kMaxWindowDim)
        return invalid("window size " + std::to_string(rows) + "x" + std::to_string(cols) +
                       " is out of range (rows and cols 1.." + std::to_string(kMaxWindowDim) + ")");
    return {};
}

Result<void> validateOnce(uint32_t timeoutMs, uint32_t maxOutput) {
    if (timeoutMs < 1 || timeoutMs > kMaxOnceTimeoutMs)
        return invalid("timeout_ms " + std::to_string(timeoutMs) + " is out of range (1.." +
                       std::to_string(kMaxOnceTimeoutMs) + ")");
    if (maxOutput > kMaxOnceOutput)
        return invalid("max_output " + std::to_string(maxOutput) + " is more than " + std::to_string(kMaxOnceOutput));
    return {};
}

Result<ExecTarget> execTarget(const wire::TaskInfo& task) {
    if (wire::parseTaskState(task.state) != wire::TaskState::Running || task.pid <= 0)
        return makeError(common::errors::kNotRunning, "the task is not running (state " + task.state + ")");
    if (!task.spec) return makeError(common::errors::kInternal, "the task's spec is not a JSON object");
    ExecTarget t;
    t.pid = static_cast<pid_t>(task.pid);
    t.unit = task.unit;
    t.cgroup = task.cgroup;
    t.processSpec = task.processSpec;
    t.env = task.spec->env;
    if (t.unit.empty() || t.cgroup.empty()) return makeError(common::errors::kInternal, "the manager names no scope for the task");
    if (t.processSpec.empty()) return makeError(common::errors::kInternal, "the manager names no process spec for the task");
    return t;
}

bool inCgroup(std::string_view procCgroup, std::string_view cgroup) {
    // The one reader of /proc/<pid>/cgroup (scope/cgroup_host.hpp).
    const auto where = scope::cgroupOfProcText(procCgroup);
    return !where.empty() && scope::cgroupIsWithin(where, cgroup);
}

std::vector<std::string> execEnvironment(const std::map<std::string, std::string>& taskEnv,
                                         const std::map<std::string, std::string>& extra) {
    auto env = taskEnv;
    env.emplace("PATH", kDefaultPath);
    for (const auto& [k, v] : extra) env[k] = v;
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
}

std::string pathOf(const std::vector<std::string>& env) {
    for (const auto& e : env)
        if (e.rfind("PATH=", 0) == 0) return e.substr(5);
    return "";
}

}  // namespace taskscope::stream::exec
