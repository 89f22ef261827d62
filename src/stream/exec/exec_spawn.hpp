#pragma once
// Starting a command inside a running task. The child is forked held on a
// pipe: it runs none of the command until the caller has had systemd move
// it into the task's scope and releases it. Released, it executes
// `taskscope-shim --exec` (src/shim/exec.c), which joins the task's
// namespaces and root and becomes the task with the shim's own code, from
// the process spec the manager saved when it started the task: one way to
// become the task, for the task and for every exec. Everything the child
// needs is prepared before fork(); after it the child only makes system
// calls.
//
// Inside, the shim forks once more and stays as the command's *keeper*
// (the command is its child, which a new pid namespace needs anyway: it
// applies to children only). The keeper holds nothing of the session but
// the write end of a status pipe: when the command ends it writes the
// wait status there and exits the way the command did. Its parent reaps
// it; a streamer that restarted in between reads the status from the
// pipe, whose read end waited in systemd's fd store.

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "shim/shim_protocol.h"

namespace taskscope::stream::exec {

/// What the command runs as and with. Its identity, capabilities,
/// no_new_privs, namespaces, root and working directory are the task's:
/// the shim takes them from the process spec the manager saved when the
/// task started (src/shim/exec.c), with the task's own code.
struct SpawnSpec {
    std::vector<std::string> argv;  ///< argv[0] is searched in the env's PATH unless it holds a '/'
    std::vector<std::string> env;   ///< "NAME=value"
    /// The command's stdin, stdout and stderr. With tty they are the
    /// terminal's slave, which becomes the controlling terminal.
    std::array<int, 3> stdio = {-1, -1, -1};
    bool tty = false;
    pid_t taskPid = 0;    ///< the task's main process, whose namespaces and root the command enters
    int taskPidfd = -1;   ///< its pidfd: the namespaces are checked to be its own
    int shim = -1;        ///< taskscope-shim, open: executed by the child (it need not be in the task's root)
    int processSpec = -1; ///< the task's saved process spec, open for reading
};

/// A forked child waiting for release().
struct HeldChild {
    pid_t pid = -1;
    common::UniqueFd pidfd;    ///< readable once the child has exited
    common::UniqueFd release;  ///< a byte lets it go; closing it makes the child exit unreleased
    common::UniqueFd reports;  ///< non-blocking read end; see SpawnReports
    common::UniqueFd status;   ///< non-blocking read end of the keeper's status pipe; see readKeeperStatus
    /// A write end of the same pipe, never written: kept beside the read
    /// end in systemd's fd store, which drops a stored fd at its first
    /// hang-up (the keeper's exit would otherwise take its status along).
    common::UniqueFd statusHold;
};

/// Forks the held child. The caller closes its copies of spec.stdio after.
common::Result<HeldChild> spawnHeld(const SpawnSpec& spec);

/// Lets a held child go on into the command.
common::Result<void> releaseChild(HeldChild& child);

/// What a child reports on its way to exec, read from HeldChild::reports.
/// The pipe reaches end of file once the command was executed or the
/// child gave up; a failure is reported before that.
struct SpawnReports {
    pid_t leader = 0;  ///< the command's process (group leader) when it is not the child itself
    bool failed = false;
    std::string step;  ///< what failed: "setns pid", "chdir", "execve", ...
    int error = 0;     ///< its errno
    bool eof = false;

    /// Reads what is there without blocking.
    void read(int fd);
    /// One frame: the first leader that is a pid above 1, the first
    /// failure (its step as printable text); anything else is ignored.
    void take(const shim_exec_report& frame);
};

/// What a keeper's status pipe says: the command's wait status once it
/// ended, or nothing yet. A keeper that is gone without a word was killed,
/// which callers report as SIGKILL, the only signal that ends a keeper.
struct KeeperStatus {
    bool ended = false;
    int status = 0;  ///< wait(2) status, when ended
};
KeeperStatus readKeeperStatus(int fd);

/// The start time of a process (field 22 of <proc>/<pid>/stat, in clock
/// ticks since boot): with its pid, it names one process for good.
std::optional<uint64_t> processStartTime(pid_t pid, const std::string& proc = "/proc");

/// pidfd_open(2).
common::Result<common::UniqueFd> openPidfd(pid_t pid);

}  // namespace taskscope::stream::exec
