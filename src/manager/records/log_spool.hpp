#pragma once
// The hand-off of a task's stdout and stderr to taskscope-streamer. For
// each task with logs, the manager creates two fifos and a description in
// the spool directory (/run/taskscope/logs):
//   <unit>.stdout, <unit>.stderr   fifos the task's shim opens read-write
//                                  (so the task never gets SIGPIPE and
//                                  blocks, rather than losing output, while
//                                  no streamer reads)
//   <unit>.release                 a fifo the shim waits on after the task's
//                                  exit, holding the two above: a pipe's
//                                  data lives only while someone holds it,
//                                  and the shim outlives both daemons. The
//                                  streamer writes a byte once it has
//                                  drained them, and the shim exits.
//   <unit>.json                    the description (wire/spool.hpp: alloc,
//                                  task, log dir, rotation, journal),
//                                  replaced atomically; "task_pid" is set
//                                  once the pid is known (journal tasks
//                                  only), "exited" turns true once the
//                                  task's exit is recorded
// The streamer owns everything after that: it reads the fifos, and deletes
// the three files once it has drained an exited task. Neither daemon waits
// for the other, so either can restart on its own.

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "wire/spool.hpp"

namespace taskscope::manager {

struct LogSettings {
    std::string logDir;
    int maxFiles = 10;
    int maxFileSizeMb = 10;
    /// Copied to the journal too (the spec's log_journal, else the node's).
    bool journal = false;
    /// The output goes to the spec's stdout_path/stderr_path through the
    /// streamer, which copies it to the journal on the way (wire/spool.hpp).
    std::optional<wire::SpoolDescription::Forward> forward;
};

/// journald's stream socket is there (a socket at `path`); else
/// JournalUnavailable, naming it and what to do. A copy to the journal is
/// refused at its start rather than lost line by line in the streamer.
common::Result<void> journalSocketReady(const std::string& path);

class LogSpool {
public:
    explicit LogSpool(std::string dir) : dir_(std::move(dir)) {}

    common::Result<void> prepareDir() const;
    /// A hold on both fifos that a manager before 0.2 kept, read-write, with
    /// copies in systemd's fd store (<unit>.stdout, <unit>.stderr). Its
    /// tasks' shims hold nothing, so after an upgrade the copies are taken
    /// back and kept until the streamer is done with the task.
    using Hold = std::pair<common::UniqueFd, common::UniqueFd>;

    /// Creates the three fifos and the description; leaves nothing on
    /// error. An entry of the same unit still there (a task started again
    /// before the streamer finished with its last run) is released first.
    common::Result<void> add(const std::string& unit, const std::string& allocId, const std::string& task,
                             const LogSettings& settings) const;
    /// Marks the task's logs complete (the streamer drains, then deletes).
    void markExited(const std::string& unit) const;
    /// Writes the task's pid into its description (a task whose output
    /// goes to the journal: journald attributes the lines by that pid).
    /// Nothing when the description is gone or is not one.
    void setTaskPid(const std::string& unit, int64_t pid) const;
    /// After a restart: a journal task's description that lacks its pid
    /// (the manager before died before writing it) gets `pid`; any other
    /// is left as it is.
    void fillTaskPid(const std::string& unit, int64_t pid) const;
    /// Removes a spool entry whose output nobody will read (a start that
    /// failed): its shim, if it holds the fifos, is released.
    void remove(const std::string& unit) const;
    /// The streamer is done with a task of an older manager: the hold's
    /// copies leave the fd store.
    void release(const std::string& unit) const;
    /// After a restart: the older manager's hold of a task whose output the
    /// streamer has not drained yet (its description is still there), from
    /// the fds the fd store gave back (taken out of `stored`). nullopt when
    /// none was stored, or when the streamer is done with the task.
    std::optional<Hold> readopt(const std::string& unit, std::map<std::string, common::UniqueFd>& stored) const;

    std::string stdoutFifo(const std::string& unit) const { return wire::spoolFile(dir_, unit, wire::kSpoolStdout); }
    std::string stderrFifo(const std::string& unit) const { return wire::spoolFile(dir_, unit, wire::kSpoolStderr); }
    std::string releaseFifo(const std::string& unit) const { return wire::spoolFile(dir_, unit, wire::kSpoolRelease); }
    std::string description(const std::string& unit) const {
        return wire::spoolFile(dir_, unit, wire::kSpoolDescription);
    }

private:
    std::string dir_;
};

}  // namespace taskscope::manager
