#pragma once
// What an exec needs to know before anything is started, as pure
// functions: the caller's arguments checked, the manager's view of the
// task read, and the identity and environment the command gets.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "wire/task_json.hpp"

namespace taskscope::stream::exec {

/// Bounds on what a caller hands to org.taskscope.Exec1.
inline constexpr size_t kMaxCommandArgs = 1024;
inline constexpr size_t kMaxCommandBytes = 128 * 1024;
inline constexpr size_t kMaxEnvVars = 256;
inline constexpr uint32_t kMaxWindowDim = 4096;
inline constexpr uint32_t kMaxOnceTimeoutMs = 3600 * 1000;
inline constexpr uint32_t kMaxOnceOutput = 4 << 20;

/// InvalidArgument unless command[0] is a non-empty program and the whole
/// command is within kMaxCommandArgs / kMaxCommandBytes.
common::Result<void> validateCommand(const std::vector<std::string>& command);

/// InvalidArgument for an empty name, a name with '=', or too many.
common::Result<void> validateEnv(const std::map<std::string, std::string>& env);

/// InvalidArgument unless 1 <= rows, cols <= kMaxWindowDim.
common::Result<void> validateWindow(uint32_t rows, uint32_t cols);

/// InvalidArgument unless 1 <= timeoutMs <= kMaxOnceTimeoutMs and
/// maxOutput <= kMaxOnceOutput.
common::Result<void> validateOnce(uint32_t timeoutMs, uint32_t maxOutput);

/// A running task as an exec sees it: from what the manager's GetTask says.
struct ExecTarget {
    pid_t pid = 0;       ///< the task's main process
    std::string unit;    ///< its scope
    std::string cgroup;  ///< the scope's cgroup path, e.g. /nomad.slice/a1-web.scope
    /// The task's saved process spec: identity, capabilities, namespaces,
    /// root and cwd, resolved once by the manager (src/shim/identity.h).
    std::string processSpec;
    std::map<std::string, std::string> env;
};

/// NotRunning unless the task's state is "running" with a main process;
/// Internal when its spec is unreadable or it names no scope or process spec.
common::Result<ExecTarget> execTarget(const wire::TaskInfo& task);

/// Whether a /proc/<pid>/cgroup text puts the process in `cgroup` or below
/// it, on any hierarchy (v2, or v1's name=systemd and controllers).
bool inCgroup(std::string_view procCgroup, std::string_view cgroup);

/// The command's environment, "NAME=value" sorted by name: the task's
/// env, PATH defaulted as the manager defaults it for the task, then the
/// caller's variables on top.
std::vector<std::string> execEnvironment(const std::map<std::string, std::string>& taskEnv,
                                         const std::map<std::string, std::string>& extra);

/// The PATH in an environment built by execEnvironment ("" when none).
std::string pathOf(const std::vector<std::string>& env);

}  // namespace taskscope::stream::exec
