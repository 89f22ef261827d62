#pragma once
// Starts a task the way the manager needs it: through taskscope-shim,
// which forks the task stopped, reports its PID, and lets it run only when
// told to, after systemd has put it in its scope.

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "manager/launch/shim_report.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::manager {

struct Launch {
    pid_t shimPid = 0;
    pid_t taskPid = 0;
    common::UniqueFd report;  ///< shim -> manager
    common::UniqueFd go;      ///< manager -> shim
    std::string pending;      ///< read from `report` past the last full line
};

struct LaunchPaths {
    std::string exitFile;
    std::string stdoutFile;  ///< empty: /dev/null
    std::string stderrFile;
    /// The spool's release fifo: the shim holds both output fifos until a
    /// byte arrives there (manager/log_spool.hpp). Empty: output to files.
    std::string releaseFifo;
    /// The shim leaves the ended task unreaped until that release (a
    /// zombie keeps its pid and cgroup): journald attributes each line the
    /// streamer copies by the task's pid (log_journal). Needs releaseFifo.
    bool keepTaskZombie = false;
    /// Where the streamer forwards the output (the spec's stdout_path and
    /// stderr_path with log_journal): the shim checks and holds them with
    /// the fifos. Need releaseFifo.
    std::string forwardStdout;
    std::string forwardStderr;
    /// cgroup.procs files the shim moves itself into once it has reported
    /// the task's pid (its home outside the manager's cgroup); empty: it
    /// stays.
    std::vector<std::string> joinCgroups;
    /// A network namespace file (/run/netns/<alloc>) the task joins
    /// before anything else; empty: the shim's own namespace.
    std::string netns;
    /// Where the task's resolved process spec is saved (mode 0600): the
    /// identity and isolation words of the shim's command line, NUL after
    /// each, from which `taskscope-shim --exec` sets up every command
    /// exec'd into the task with the task's own code. Empty: not saved.
    std::string processSpec;
};

/// Spawns the shim and returns at once; the report pipe is non-blocking.
/// Its first line ("pid N", or "error ERRNO STEP") goes to acceptPid.
common::Result<Launch> spawnShim(const std::string& shimPath, const spec::TaskSpec& spec, const LaunchPaths& paths);

/// The shim's first report: the task exists, blocked before exec
/// (parsePidLine; `launch` is left as it was when it is refused).
common::Result<void> acceptPid(Launch& launch, const std::string& line);

/// Lets the task exec; its outcome is the next report line (acceptRelease).
common::Result<void> sendGo(Launch& launch);

/// Spawns the shim; returns once the task exists, blocked before exec.
/// (Blocking forms of the above, for callers without an event loop.)
common::Result<Launch> spawnTask(const std::string& shimPath, const spec::TaskSpec& spec, const LaunchPaths& paths);

/// Lets the task exec. ExecFailed when the command could not be executed.
common::Result<void> releaseTask(Launch& launch);

/// Aborts a launch: the task never runs its command and the shim exits
/// without an exit record.
void abortTask(Launch& launch);

}  // namespace taskscope::manager
