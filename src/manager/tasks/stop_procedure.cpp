// A stop's steps: its turn, its signal and deadline on disk first, the kill
// when its grace runs out (stop_procedure.hpp).
#include "manager/tasks/stop_procedure.hpp"

#include <time.h>

#include <chrono>
#include <utility>

#include "common/error_names.hpp"
#include "common/signals.hpp"

namespace taskscope::manager {

namespace {

using common::makeError;
using common::Result;

using task::label;

}  // namespace

uint64_t bootUs() {
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

const char* toString(StopStep step) {
    switch (step) {
        case StopStep::Idle:
            return "idle";
        case StopStep::Requested:
            return "requested";
        case StopStep::Signalled:
            return "signalled";
        case StopStep::Killing:
            return "killing";
        case StopStep::Ended:
            return "ended";
    }
    return "unknown";
}

// What a stop holds, from the step it takes it on, until the task's end
// gives it back (ended()). The durable part, on the record: the queued
// signal and grace from Requested (so that a restart asks its turn again),
// the kill deadline from Signalled (so that a restart kills on time); both
// are cleared here, and the end's last write of the record
// (task_end.hpp) takes them off the disk. The place among the stops in flight is the pacer's, taken at
// Requested and freed once the task's scope has emptied (the registry
// hears the shim's exit).
const StopProcedure::Held StopProcedure::kHeld[] = {
    {"its kill timer (the grace's end)", StopStep::Signalled, &StopProcedure::releaseKillTimer},
    {"its durable part on the record: the queued signal and grace, the kill deadline (the end's last write "
     "takes them off the disk)",
     StopStep::Idle, &StopProcedure::releaseRecordFields},
};

StopProcedure::StopProcedure(StopContext ctx, task::TaskRecord& record, StopEvents& events)
    : ctx_(ctx), record_(record), events_(events) {}

StopProcedure::~StopProcedure() { releaseKillTimer(); }

Result<void> StopProcedure::request(const std::string& text, int64_t graceMs) {
    auto& r = record_;
    if (r.finished()) return makeError(common::errors::kNotRunning, "task " + label(r) + " has exited");
    int sig = r.spec.killSignal;
    if (!text.empty()) {
        auto parsed = common::parseSignal(text);
        if (!parsed) return parsed.error();
        sig = *parsed;
    }
    const int64_t grace = graceMs < 0 ? r.spec.killTimeoutMs : graceMs;
    if (r.state != task::TaskState::Stopping) {
        r.state = task::TaskState::Stopping;
        events_.stopChanged(r);
    }
    // Signalled already: signalled again at once, its grace from now.
    if (step_ >= StopStep::Signalled) {
        send(sig, grace);
        return {};
    }
    // Its turn among the stops in flight (stop_pacer.hpp); a kill without
    // grace goes ahead of those waiting. Usually that is now.
    step_ = StopStep::Requested;
    r.queuedStopSignal = sig;
    r.queuedStopGraceMs = grace;
    ctx_.pacer.request(r.unit, grace == 0);
    if (r.queuedStopSignal) {
        // On disk: a manager that dies now still sends it after its restart.
        ctx_.records.persist(r);
        events_.stopQueued(r);
    }
    return {};
}

void StopProcedure::admitted() {
    auto& r = record_;
    const int sig = r.queuedStopSignal;
    const int64_t grace = r.queuedStopGraceMs;
    r.queuedStopSignal = 0;
    r.queuedStopGraceMs = 0;
    send(sig, grace);
}

void StopProcedure::resumeDeadline() {
    step_ = StopStep::Signalled;
    armKillTimer();
}

void StopProcedure::resumeQueue() {
    step_ = StopStep::Requested;
    ctx_.pacer.request(record_.unit, record_.queuedStopGraceMs == 0);
}

void StopProcedure::send(int sig, int64_t grace) {
    auto& r = record_;
    events_.stopSent(r, sig, grace);
    if (grace == 0) {
        // No deadline to keep; on disk without the stop it may have waited with.
        r.killDeadlineUs = 0;
        ctx_.records.persist(r);
        step_ = StopStep::Signalled;
        return kill();
    }
    // The deadline is on disk before the signal goes out: a manager that
    // dies now still kills the task on time after its restart.
    r.killDeadlineUs = bootUs() + static_cast<uint64_t>(grace) * 1000u;
    ctx_.records.persist(r);
    events_.signalTask(r, sig);
    step_ = StopStep::Signalled;
    armKillTimer();
}

void StopProcedure::armKillTimer() {
    releaseKillTimer();
    const uint64_t now = bootUs();
    const uint64_t left = record_.killDeadlineUs > now ? record_.killDeadlineUs - now : 0;
    killTimer_ = ctx_.loop.addTimer(common::EventLoop::Clock::now() + std::chrono::microseconds(left), [this] {
        killTimer_ = 0;
        if (!record_.finished()) kill();
    });
}

void StopProcedure::kill() {
    step_ = StopStep::Killing;
    ctx_.killer.killAll(record_.unit, record_.cgroup, [this, alive = std::weak_ptr<int>(lifetime_)](Result<void> k) {
        if (!k && !alive.expired()) events_.killFailed(record_, k.error());
    });
}

void StopProcedure::ended() {
    for (const auto& held : kHeld)
        if (step_ >= held.heldFrom) (this->*held.release)();
    step_ = StopStep::Ended;
}

void StopProcedure::releaseRecordFields() {
    record_.killDeadlineUs = 0;
    record_.queuedStopSignal = 0;
    record_.queuedStopGraceMs = 0;
}

void StopProcedure::releaseKillTimer() {
    if (killTimer_) ctx_.loop.cancelTimer(killTimer_);
    killTimer_ = 0;
}

}  // namespace taskscope::manager
