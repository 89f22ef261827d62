#pragma once
// The log spool between taskscope-manager, which fills it, and
// taskscope-streamer, which drains it (/run/taskscope/logs; the contract is
// manager/records/log_spool.hpp's): per task <unit>.stdout and <unit>.stderr
// (fifos), <unit>.release (the fifo its shim waits on) and <unit>.json, the
// description. Both sides name the files and read or write the description
// through here only.

#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace taskscope::wire {

// The files' names after the unit's: <unit>.<name>.
inline constexpr const char kSpoolStdout[] = "stdout";
inline constexpr const char kSpoolStderr[] = "stderr";
inline constexpr const char kSpoolRelease[] = "release";
inline constexpr const char kSpoolDescription[] = "json";
/// The output streams, as their fifos (and the tasks' log files) are named.
inline constexpr const char* kSpoolStreams[] = {kSpoolStdout, kSpoolStderr};

/// "<unit>.<name>": a spool file's name (also a held fifo's fd store name).
inline std::string spoolName(const std::string& unit, std::string_view name) {
    return unit + "." + std::string(name);
}
/// <dir>/<unit>.<name>
inline std::string spoolFile(const std::string& dir, const std::string& unit, std::string_view name) {
    return dir + "/" + spoolName(unit, name);
}

/// What <unit>.json says.
struct SpoolDescription {
    std::string allocId;
    std::string task;
    std::string logDir;  ///< where the task's rotated log files go
    int maxFiles = 10;
    int maxFileSizeMb = 10;
    bool exited = false;  ///< the task's exit is recorded: drain, then delete
    /// Copy the output to the journal as well (the spec's log_journal, or
    /// the node's default): the streamer sends each stream to journald's
    /// stream socket with the task's pid as its credentials, so journald
    /// itself attributes the lines to the task's scope.
    bool journal = false;
    /// The task's pid, once the manager knows it (0 before): the pid
    /// journald looks up. Its shim keeps it unreaped until the streamer
    /// releases the fifos, so the pid names the task until its last line.
    int64_t taskPid = 0;
    /// Where the output goes instead of rotated files (issue 59): a task
    /// started with stdout_path/stderr_path (Nomad's log fifos) whose
    /// output is copied to the journal too. The streamer sits between the
    /// task and those paths, so it sees what it copies. Empty: this
    /// stream is dropped (the paths' own meaning); neither set: files.
    struct Forward {
        std::string stdoutPath;
        std::string stderrPath;
        /// The task's uid: besides root, the one owner a path may have.
        int64_t uid = 0;
    };
    std::optional<Forward> forward;
};

/// The description as its file holds it (a JSON object and a newline).
std::string describe(const SpoolDescription& d);
/// Reads a description; InvalidArgument when it is not one.
common::Result<SpoolDescription> parseSpoolDescription(std::string_view text);
/// The same text with "exited" set; InvalidArgument when it is not one.
common::Result<std::string> markedExited(std::string_view text);
/// The same text with "task_pid" set; InvalidArgument when it is not one.
common::Result<std::string> withTaskPid(std::string_view text, int64_t pid);

/// The unit of a spool file name ("a1-web.scope.json" -> "a1-web.scope"),
/// or "" when the name is not a description.
std::string unitOfDescription(const std::string& fileName);

}  // namespace taskscope::wire
