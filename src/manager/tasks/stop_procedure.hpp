#pragma once
// One task's stop, from StopTask to the task's end, in the start
// procedure's shape: the step it has reached (StopStep) and, in one table,
// what each step holds until the task has ended (kHeld in
// stop_procedure.cpp), given back by ended(). The stop's durable part is
// on the task's record (the signal and grace it waits with, the kill
// deadline once signalled), written before the step it guards, so that a
// manager restarted mid-stop goes on with it (resumeDeadline,
// resumeQueue).
//
// The registry makes one for a task the first time it is asked to stop
// and tells it the task's end; it hears back through StopEvents. The
// place among the stops in flight is the pacer's (stop_pacer.hpp), freed
// by the registry once the task's scope has emptied (its shim's exit).

#include <cstdint>
#include <memory>
#include <string>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "manager/node/stop_pacer.hpp"
#include "manager/records/record_writer.hpp"
#include "scope/scope_killer.hpp"
#include "task/task_record.hpp"

namespace taskscope::manager {

enum class StopStep {
    Idle,       ///< not asked to stop
    Requested,  ///< asked: "stopping", its signal and grace on the record, waiting its turn in the pacer
    Signalled,  ///< its signal sent; its kill deadline on disk before, its kill timer armed
    Killing,    ///< every process of its scope killed (no grace, or the grace ran out)
    Ended,      ///< the task has ended: its timer is off
};

const char* toString(StopStep step);

/// The clock of kill deadlines (TaskRecord::killDeadlineUs): CLOCK_BOOTTIME
/// in microseconds. A deadline outlives the manager process but not the
/// boot (tasks do not survive a reboot either), and must not move when the
/// wall clock does.
uint64_t bootUs();

class StopEvents {
public:
    virtual ~StopEvents() = default;
    /// The task's state as readers see it changed (running -> stopping).
    virtual void stopChanged(const task::TaskRecord& record) = 0;
    /// Its main process is to get `signal`, only while it is the task's.
    virtual void signalTask(const task::TaskRecord& record, int signal) = 0;
    /// Its stop goes now: `signal` with `graceMs` (0: killed at once).
    virtual void stopSent(const task::TaskRecord& record, int signal, int64_t graceMs) = 0;
    /// Its stop waits its turn among the stops in flight.
    virtual void stopQueued(const task::TaskRecord& record) = 0;
    /// The kill of its scope's processes was not delivered (neither
    /// cgroup.kill nor systemd took it): the task may still run.
    virtual void killFailed(const task::TaskRecord& record, const common::Error& error) = 0;
};

struct StopContext {
    common::EventLoop& loop;
    StopPacer& pacer;
    scope::ScopeKiller& killer;
    RecordWriter& records;
};

class StopProcedure {
public:
    /// `record`: the task's, which outlives the procedure (its entry holds both).
    StopProcedure(StopContext ctx, task::TaskRecord& record, StopEvents& events);
    ~StopProcedure();
    StopProcedure(const StopProcedure&) = delete;
    StopProcedure& operator=(const StopProcedure&) = delete;

    /// StopTask: `signal` ("" : the spec's kill signal) and `graceMs` (< 0:
    /// the spec's kill timeout). A task signalled already is signalled
    /// again at once, its grace from now; otherwise it waits its turn
    /// (usually none: the pacer admits it before this returns).
    common::Result<void> request(const std::string& signal, int64_t graceMs);
    /// The pacer's turn for the stop that waited.
    void admitted();
    /// After a restart, a signalled stop: its grace runs on from its deadline.
    void resumeDeadline();
    /// After a restart, a stop that waited its turn: it asks again.
    void resumeQueue();
    /// The task has ended (exited or lost): what the stop held goes.
    void ended();

    StopStep step() const { return step_; }

private:
    struct Held {
        const char* what;
        StopStep heldFrom;
        void (StopProcedure::*release)();
    };
    static const Held kHeld[];

    void send(int signal, int64_t graceMs);
    void armKillTimer();
    void kill();
    void releaseKillTimer();
    void releaseRecordFields();

    StopContext ctx_;
    task::TaskRecord& record_;
    StopEvents& events_;
    StopStep step_ = StopStep::Idle;
    uint64_t killTimer_ = 0;
    /// Expires with this stop: a kill's answer that comes after it does nothing.
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
};

}  // namespace taskscope::manager
