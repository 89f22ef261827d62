#pragma once
// The manager's state on disk, one file per task, each replaced
// atomically, so a kill -9 at any instant leaves every task findable:
//   <dir>/tasks/<unit>.json  the task record (written by the manager)
//   <dir>/exits/<unit>       the exit record (written by the task's shim)
//   <dir>/exits/<unit>.aborted  instead, when its start was cut off
//   <dir>/logs/<alloc>/      the task's stdout and stderr

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/result.hpp"
#include "task/task_record.hpp"

namespace taskscope::manager {

using task::TaskRecord;

class StateStore {
public:
    explicit StateStore(std::string dir) : dir_(std::move(dir)) {}

    common::Result<void> prepare() const;
    common::Result<void> save(const TaskRecord& record) const;
    /// A record that could not be read (cut by a power cut, not JSON, a
    /// field of the wrong kind): set aside as `keptAs`, never read again,
    /// so that one bad file costs its own task and not the daemon's start.
    struct Unreadable {
        std::string file;
        std::string keptAs;  ///< "" when even the rename failed
        common::Error why;
    };
    struct Loaded {
        std::vector<TaskRecord> records;
        std::vector<Unreadable> unreadable;
    };
    /// Every record; an error only when the directory cannot be listed.
    common::Result<Loaded> loadAll() const;
    void remove(const TaskRecord& record) const;

    /// Where a task's record lives, and its text (for a DurableWriter).
    std::string recordFile(const std::string& unit) const { return dir_ + "/tasks/" + unit + ".json"; }
    static std::string recordText(const TaskRecord& record);

    std::string exitsDir() const { return dir_ + "/exits"; }
    std::string exitFile(const std::string& unit) const { return exitsDir() + "/" + unit; }
    /// What a shim leaves instead of an exit file when its start was
    /// aborted before the task ran ("shim_pid=N"): its pid, or 0 if none.
    std::string abortedMark(const std::string& unit) const;
    pid_t abortedShim(const std::string& unit) const;
    /// An exit record or aborted mark in the exits directory.
    struct ExitsEntry {
        std::string unit;
        std::string path;
    };
    /// Every exit record and aborted mark there, in one listing.
    std::vector<ExitsEntry> exitsEntries() const;
    std::string processDir() const { return dir_ + "/process"; }
    /// The task's resolved process spec (launcher.hpp), for exec.
    std::string processSpecFile(const std::string& unit) const { return processDir() + "/" + unit; }
    std::string logDir(const std::string& allocId) const;

private:
    std::string dir_;
};

}  // namespace taskscope::manager
