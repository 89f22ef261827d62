#pragma once
// A task's record on disk, written and removed off the loop (group commit,
// common/durable_writer.hpp), in the order asked. Shared by the registry
// and the starts, which write records of their own before their task runs.

#include <functional>
#include <memory>
#include <string>

#include "common/durable_writer.hpp"
#include "common/event_loop.hpp"
#include "manager/state_store.hpp"

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
    /// Removes the task's record, in order with its writes still pending
    /// (which must not bring it back), and its exit record, aborted mark
    /// and process spec, all off the loop in one round. `gone` runs once
    /// all four are done, and hears whether the record is off the disk:
    /// a failure is the caller's to report, never only a log line (a task
    /// whose record stays comes back after a restart).
    void unpersist(const std::string& unit, std::function<void(common::Result<void>)> gone = {});

    const StateStore& store() const { return store_; }

private:
    const StateStore& store_;
    /// Last: destroyed first, it finishes every write still asked.
    std::unique_ptr<common::DurableWriter> writer_;
};

}  // namespace taskscope::manager
