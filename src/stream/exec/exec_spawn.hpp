#pragma once
// Starting a command inside a running task. The child is forked held on a
// pipe: it runs none of the command until the caller has had systemd move
// it into the task's scope and releases it. Released, it joins the task's
// namespaces and root, starts a session, takes the task's identity and
// working directory and executes the command. Everything it needs is
// prepared before fork(); after it the child only makes system calls.
//
// Inside, the child forks once more and stays as the command's *keeper*
// (the command is its child, which a new pid namespace needs anyway: it
// applies to children only). The keeper holds nothing of the session but
// the write end of a status pipe: when the command ends it writes the
// wait status there and exits the way the command did. Its parent reaps
// it; a streamer that restarted in between reads the status from the
// pipe, whose read end waited in systemd's fd store.

#include <sched.h>
#include <sys/types.h>

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "common/unique_fd.hpp"

namespace taskscope::stream::exec {

/// The namespaces an exec joins, in the order it joins them (nsenter's).
inline constexpr std::array<std::pair<const char*, int>, 6> kNamespaces = {{
    {"cgroup", CLONE_NEWCGROUP},
    {"ipc", CLONE_NEWIPC},
    {"uts", CLONE_NEWUTS},
    {"net", CLONE_NEWNET},
    {"pid", CLONE_NEWPID},
    {"mnt", CLONE_NEWNS},
}};

/// The namespaces of a task's process that differ from the caller's, open.
struct TaskNamespaces {
    struct Join {
        const char* kind;
        int nstype;
        common::UniqueFd fd;
    };
    std::vector<Join> join;  ///< in kNamespaces order
    bool newPid = false;     ///< a pid namespace is among them
    common::UniqueFd root;   ///< the task's root, when the child must chroot to it
    /// The task's capability bounding set when it is narrower than ours (an
    /// isolated task): the command gets that set, through the shim's own
    /// code (src/shim/caps.c), not the streamer's full one.
    std::optional<uint64_t> caps;
    /// The task runs with no_new_privs: so does every command exec'd into it.
    bool noNewPrivs = false;
};

/// Opens <proc>/<pid>/ns/<kind> for each kind whose inode differs from
/// <proc>/self/ns/<kind>, and <proc>/<pid>/root when the task's mount
/// namespace or root differs from ours. A kind the kernel lacks is skipped.
common::Result<TaskNamespaces> openTaskNamespaces(pid_t pid, const std::string& proc = "/proc");

/// What the command runs as and with.
struct SpawnSpec {
    std::vector<std::string> argv;  ///< argv[0] is searched in the env's PATH unless it holds a '/'
    std::vector<std::string> env;   ///< "NAME=value"
    std::string cwd = "/";
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
    /// The command's stdin, stdout and stderr. With tty they are the
    /// terminal's slave, which becomes the controlling terminal.
    std::array<int, 3> stdio = {-1, -1, -1};
    bool tty = false;
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
common::Result<HeldChild> spawnHeld(const SpawnSpec& spec, const TaskNamespaces& ns);

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
