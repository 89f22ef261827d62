#pragma once
// A task's record on disk, written and removed off the loop (group commit,
// common/durable_writer.hpp), in the order asked. Shared by the registry
// and the starts, which write records of their own before their task runs.

#include <functional>
#include <memory>
#include <set>
#include <string>

#include "common/durable_writer.hpp"
#include "common/event_loop.hpp"
#include "manager/records/state_store.hpp"

namespace taskscope::manager {

class RecordWriter {
public:
    RecordWriter(const StateStore& store, common::EventLoop& loop);

    /// Saves the record; `durable` runs once it is on disk. A failed save
    /// ends the daemon: it cannot promise "no exit code lost" once its disk
    /// fails, and systemd restarts it to recover from what is on disk.
    /// `first`: a start waits for it before its task runs, so it goes ahead
    /// of the writes and removals waiting (a drain's thousands).
    void persist(const TaskRecord& record, std::function<void()> durable = {}, bool first = false);
    /// Told a failed save's unit and error just before the daemon ends
    /// (the daemon's journal has its last word; nothing here logs).
    using LastWord = std::function<void(const std::string& unit, const common::Error& error)>;
    void setLastWord(LastWord lastWord) { *lastWord_ = std::move(lastWord); }
    /// Removes the task's record, in order with its writes still pending
    /// (which must not bring it back), and its exit record, aborted mark
    /// and process spec, all off the loop in one round. `gone` runs once
    /// all four are done, and hears whether the record is off the disk:
    /// a failure is the caller's to report, never only a log line (a task
    /// whose record stays comes back after a restart).
    void unpersist(const std::string& unit, std::function<void(common::Result<void>)> gone = {});
    /// Removes the task's process spec alone, off the loop, in order with
    /// the writes asked before: what a start that failed before its record
    /// was written had made (unpersist removes it with the rest).
    void removeProcessSpec(const std::string& unit, std::function<void(common::Result<void>)> gone = {});

    /// Whether a start of `unit` must look for an exit record or aborted
    /// mark left by an earlier task of its name (and remove them) before
    /// its shim runs; asked once per start, it forgets the name.
    ///
    /// Only a name suspected of leftovers is looked up: the look-up of a
    /// name the dentry cache lacks waits for the exits directory's lock,
    /// which the shims' exit records and a drain's removals hold while
    /// they wait for the journal (seconds in a drain: bench/README.md,
    /// stop 41). A file is left only where its removal failed (a forget's,
    /// noted here), where a start failed with its shim spawned (it may
    /// write its aborted mark as it leaves), or where no record names it
    /// at startup (recovery removes those, and suspects what it cannot).
    bool takeLeftoverCheck(const std::string& unit) { return leftovers_.erase(unit) > 0; }
    /// `unit` may have an exit record or aborted mark on disk.
    void suspectLeftovers(const std::string& unit) { leftovers_.insert(unit); }

    const StateStore& store() const { return store_; }

private:
    /// Shared with the saves' completions.
    std::shared_ptr<LastWord> lastWord_ = std::make_shared<LastWord>();
    const StateStore& store_;
    std::set<std::string> leftovers_;  ///< units a start must look for leftovers of
    /// Last: destroyed first, it finishes every write still asked.
    std::unique_ptr<common::DurableWriter> writer_;
};

}  // namespace taskscope::manager
