#pragma once
// Starts a task the way the manager needs it: through taskscope-shim,
// which forks the task stopped, reports its PID, and lets it run only when
// told to, after systemd has put it in its scope.

#include <sys/types.h>

#include <string>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "manager/task_spec.hpp"

namespace taskscope::manager {

struct Launch {
    pid_t shimPid = 0;
    pid_t taskPid = 0;
    common::UniqueFd report;  ///< shim -> manager
    common::UniqueFd go;      ///< manager -> shim
};

struct LaunchPaths {
    std::string exitFile;
    std::string stdoutFile;  ///< empty: /dev/null
    std::string stderrFile;
};

/// Spawns the shim; returns once the task exists, blocked before exec.
common::Result<Launch> spawnTask(const std::string& shimPath, const TaskSpec& spec, const LaunchPaths& paths);

/// Lets the task exec. ExecFailed when the command could not be executed.
common::Result<void> releaseTask(Launch& launch);

/// Aborts a launch: the task never runs its command and the shim exits
/// without an exit record.
void abortTask(Launch& launch);

}  // namespace taskscope::manager
