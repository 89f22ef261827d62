#pragma once
// A task's end, whoever saw it (its exit record read, its shim and its
// processes gone, a record that cannot be read), in the start and stop
// procedures' shape: one table of steps (kEnd in task_end.cpp), run in one
// order. What the task held goes back first (its stop's timer, its weight
// in its slices' sums and its cores, the watches on it), what it left in
// its scope is killed, and only then is the end announced and the record
// written for the last time.
//
// The registry owns the task's entry and hears back through EndEvents; it
// logs what it hears. Nothing here logs.

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>

#include "common/result.hpp"
#include "manager/node/allocation_slices.hpp"
#include "manager/node/stop_pacer.hpp"
#include "manager/records/log_spool.hpp"
#include "manager/records/record_writer.hpp"
#include "manager/tasks/exit_watch.hpp"
#include "manager/tasks/stop_procedure.hpp"
#include "scope/cgroup_host.hpp"
#include "scope/scope_killer.hpp"
#include "task/task_record.hpp"

namespace taskscope::manager {

/// What a task's end tells the registry (which implements it).
class EndEvents {
public:
    virtual ~EndEvents() = default;
    /// Its cores go back to the pool (a reservation's: the shared tasks
    /// get the grown pool).
    virtual void coresFreed(task::TaskRecord& record) = 0;
    /// Its end as readers see it: its state changed, and its exit.
    virtual void endAnnounced(task::TaskRecord& record) = 0;
    /// What it left in its scope could not be killed.
    virtual void leftoversSurvived(const std::string& unit, const common::Error& error) = 0;
    /// Its shim died without an exit record: no exit code can be known,
    /// and the task stays running while its scope has processes.
    virtual void shimDiedWithoutRecord(const task::TaskRecord& record) = 0;
};

struct EndContext {
    StopPacer& stops;
    AllocationSlices& slices;
    ExitWatch& exits;
    LogSpool& spool;
    scope::ScopeKiller& killer;
    RecordWriter& records;
    const scope::CgroupHost& host;
    /// Shims spawned and not reaped, to their unit: a task whose shim is
    /// still there (it waits for the streamer) has not emptied its scope.
    const std::map<pid_t, std::string>& liveShims;
};

class TaskEnd {
public:
    TaskEnd(EndContext ctx, EndEvents& events) : ctx_(ctx), events_(events) {}

    /// Its exit record was read: it exited with `status`.
    void exited(task::TaskRecord& record, StopProcedure* stop, const task::ExitStatus& status);
    /// Its end cannot be known (no exit record, or one that cannot be
    /// read): lost, with the reason, never left running for ever.
    void lost(task::TaskRecord& record, StopProcedure* stop, std::string reason);
    /// A running task's shim is gone: its exit record is collected if it
    /// left one, else the task stays running while its scope has
    /// processes (watched as an orphan).
    void shimGone(const task::TaskRecord& record);

private:
    struct Step {
        const char* what;
        void (TaskEnd::*run)(task::TaskRecord& record, StopProcedure* stop);
    };
    static const Step kEnd[];

    void finish(task::TaskRecord& record, StopProcedure* stop);
    void endStop(task::TaskRecord& record, StopProcedure* stop);
    void endSlicesAndCores(task::TaskRecord& record, StopProcedure* stop);
    void endWatches(task::TaskRecord& record, StopProcedure* stop);
    void endLeftovers(task::TaskRecord& record, StopProcedure* stop);
    void endAnnounced(task::TaskRecord& record, StopProcedure* stop);

    EndContext ctx_;
    EndEvents& events_;
    /// Expires with this end: a kill's answer that comes after it does nothing.
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
};

}  // namespace taskscope::manager
