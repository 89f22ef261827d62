// A task's end (task_end.hpp): kEnd's steps over what the task held, the
// announcement and the record's last write last.
#include "manager/tasks/task_end.hpp"

#include <utility>

#include "common/clock.hpp"

namespace taskscope::manager {

using task::TaskRecord;
using task::TaskState;

// What a task's end does, in this order, whoever saw the end (its exit
// record read, its shim and processes gone, a restart's recovery): the
// stop's hold and the task's places go back first, the announcement and
// the record's last write come last.
const TaskEnd::Step TaskEnd::kEnd[] = {
    {"its stop: its kill timer off and its durable part off the record; its place among the stops in flight "
     "frees once the scope has emptied",
     &TaskEnd::endStop},
    {"its weight in its allocation's slices' sums, its cores back to the pool", &TaskEnd::endSlicesAndCores},
    {"the exit watch's interest; the spool told (the streamer drains its output)", &TaskEnd::endWatches},
    {"whatever it left in its scope, killed (as Nomad's executor ends a task)", &TaskEnd::endLeftovers},
    {"its change and its exit announced; its record on disk", &TaskEnd::endAnnounced},
};

void TaskEnd::exited(TaskRecord& r, StopProcedure* stop, const task::ExitStatus& status) {
    r.exit = status;
    r.state = TaskState::Exited;
    finish(r, stop);
}

void TaskEnd::lost(TaskRecord& r, StopProcedure* stop, std::string reason) {
    r.state = TaskState::Lost;
    r.lostReason = std::move(reason);
    r.exit = task::ExitStatus{};
    r.exit.finishedAtUs = common::wallClockUs();
    finish(r, stop);
}

void TaskEnd::shimGone(const TaskRecord& r) {
    // A shim writes the record before it exits; its inotify event may come
    // after the SIGCHLD.
    if (ctx_.exits.exitRecordExists(r.unit)) {
        // The scope has emptied (the shim was its last process, barring
        // leftovers): the stop's place can free after the next round trip
        // through systemd, not after the record's read, which a drain's
        // writes delay by seconds.
        ctx_.stops.ended(r.unit);
        return ctx_.exits.collect(r.unit);
    }
    if (ctx_.exits.watchingOrphan(r.unit)) return;
    events_.shimDiedWithoutRecord(r);
    ctx_.exits.watchOrphan(r.unit, ctx_.host.processesFile(r.cgroup).value_or(""),
                           ctx_.host.eventsFile(r.cgroup).value_or(""));
}

void TaskEnd::finish(TaskRecord& r, StopProcedure* stop) {
    r.pid = 0;
    for (const auto& step : kEnd) (this->*step.run)(r, stop);
}

void TaskEnd::endStop(TaskRecord& r, StopProcedure* stop) {
    // With its shim still there (it waits for the streamer), the scope has
    // not emptied: the shim's exit frees the stop's place (the registry's
    // shimsReaped).
    if (r.shimPid <= 0 || !ctx_.liveShims.count(r.shimPid)) ctx_.stops.ended(r.unit);
    if (stop) return stop->ended();
    // Never asked to stop in this manager's life: a stop's durable part is
    // not on the record (recovery resumes any it finds through a
    // StopProcedure); cleared all the same, as the stop's own end does.
    r.killDeadlineUs = 0;
    r.queuedStopSignal = 0;
    r.queuedStopGraceMs = 0;
}

void TaskEnd::endSlicesAndCores(TaskRecord& r, StopProcedure*) {
    ctx_.slices.stopped(r.unit);
    events_.coresFreed(r);
}

void TaskEnd::endWatches(TaskRecord& r, StopProcedure*) {
    ctx_.exits.forget(r.unit);
    ctx_.spool.markExited(r.unit);
}

void TaskEnd::endLeftovers(TaskRecord& r, StopProcedure*) {
    ctx_.killer.killLeftovers(r.unit, r.cgroup,
                              [this, unit = r.unit, alive = std::weak_ptr<int>(lifetime_)](common::Result<void> k) {
                                  if (!k && !alive.expired()) events_.leftoversSurvived(unit, k.error());
                              });
}

void TaskEnd::endAnnounced(TaskRecord& r, StopProcedure*) {
    events_.endAnnounced(r);
    // One write, after the signals: a write goes to disk after the loop
    // has moved on anyway (record_writer.hpp), so a write before them
    // promised nothing more, and it cost a drain one more record to
    // serialize per task. A restart before this one is on disk finds the
    // shim's exit record and reports the exit again.
    ctx_.records.persist(r);
}

}  // namespace taskscope::manager
