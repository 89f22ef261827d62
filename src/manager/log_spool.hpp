#pragma once
// The hand-off of a task's stdout and stderr to taskscope-streamer. For
// each task with logs, the manager creates two fifos and a description in
// the spool directory (/run/taskscope/logs):
//   <unit>.stdout, <unit>.stderr   fifos the task's shim opens read-write
//                                  (so the task never gets SIGPIPE and
//                                  blocks, rather than losing output, while
//                                  no streamer reads)
//   <unit>.json                    {"alloc_id","task","log_dir","max_files",
//                                  "max_file_size_mb","exited"}, replaced
//                                  atomically; "exited" turns true once the
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

namespace taskscope::manager {

struct LogSettings {
    std::string logDir;
    int maxFiles = 10;
    int maxFileSizeMb = 10;
};

class LogSpool {
public:
    explicit LogSpool(std::string dir) : dir_(std::move(dir)) {}

    common::Result<void> prepareDir() const;
    /// Both fifos held open read-write by the manager. A pipe's data lives
    /// only while someone holds it: without these, a task that writes and
    /// exits before the streamer opens its fifos would lose its output.
    /// Copies go into systemd's fd store (<unit>.stdout, <unit>.stderr), so
    /// the hold outlives a crash or restart of the manager: output written
    /// while both daemons are down waits in the pipe.
    using Hold = std::pair<common::UniqueFd, common::UniqueFd>;

    /// Creates the fifos and the description; leaves nothing on error.
    common::Result<Hold> add(const std::string& unit, const std::string& allocId, const std::string& task,
                             const LogSettings& settings) const;
    /// Marks the task's logs complete (the streamer drains, then deletes).
    void markExited(const std::string& unit) const;
    /// Removes a spool entry that never ran (a start that failed).
    void remove(const std::string& unit) const;
    /// The streamer is done with the task: the hold's copies leave the fd store.
    void release(const std::string& unit) const;
    /// After a restart: the hold of a task whose output the streamer has
    /// not drained yet (its description is still there), from the fds the
    /// fd store gave back (taken out of `stored`), else the fifos opened
    /// again. nullopt when the streamer is done with the task.
    std::optional<Hold> readopt(const std::string& unit, std::map<std::string, common::UniqueFd>& stored) const;

    std::string stdoutFifo(const std::string& unit) const { return dir_ + "/" + unit + ".stdout"; }
    std::string stderrFifo(const std::string& unit) const { return dir_ + "/" + unit + ".stderr"; }
    std::string description(const std::string& unit) const { return dir_ + "/" + unit + ".json"; }

private:
    void store(const std::string& unit, const Hold& hold) const;
    std::string dir_;
};

}  // namespace taskscope::manager
