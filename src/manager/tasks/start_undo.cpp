// A start's failure, whichever step it reached: the undo list over what
// the start holds (kOwned), in its one safe order, and then the caller is
// told (start_procedure.hpp).
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <utility>

#include "common/error_names.hpp"
#include "manager/launch/task_dirs.hpp"
#include "manager/tasks/start_procedure.hpp"

namespace taskscope::manager {

namespace {

// A shim told to leave (or whose exec failed) exits at once; this bounds a
// wait for one that does not, rather than holding the caller for ever.
constexpr auto kShimExitWait = std::chrono::seconds(10);
// The same for a start past its start_timeout_ms, whose caller was
// promised an answer by then: under a fork bomb a shim held in the kernel
// (its clone3 into a cgroup, its move into its home) did not exit within
// 10 s, and 16 of 50 answers came 10 s late (bench/README.md, stop 48).
// Its go pipe is closed, so it can no longer release the task; it leaves
// when the kernel lets it, and the next start of the name looks for the
// aborted mark it may write (suspectLeftovers).
constexpr auto kOverloadedShimExitWait = std::chrono::seconds(1);
// A failed start's empty scope: its stop is waited for this long at most.
constexpr auto kScopeStopWait = std::chrono::seconds(3);

}  // namespace

// What a start owns, from the step it reaches it on, and how a failure
// gives it back: the one undo list, run in this order over what the start
// holds whichever step failed. The shim goes first: once it has left (told
// to, or after its exec failed) nothing of the task runs and nothing
// writes the task's files any more. The caller is told after the last.
// The registry then only erases the task's entry.
const StartProcedure::Undo StartProcedure::kOwned[] = {
    {"the shim: it leaves without running the task (or after its exec failed), waited for (10 s at most; 1 s past "
     "start_timeout_ms)",
     StartStep::Spawned,
     &StartProcedure::undoShim},
    {"the task's scope, stopped (systemd collects it once empty anyway)", StartStep::ScopeMade,
     &StartProcedure::undoScope},
    {"its record, exit record, aborted mark and process spec, off the disk", StartStep::Recorded,
     &StartProcedure::undoRecord},
    {"its spool entry (fifos and description)", StartStep::Preparing, &StartProcedure::undoSpool},
    {"its process spec file, off the loop (with the record, once that was written)", StartStep::Preparing,
     &StartProcedure::undoProcessSpec},
    {"the task dirs taskscope made for it (its allocation's with its last task), on the start worker (not "
     "waited for by a start past its start_timeout_ms)",
     StartStep::Preparing, &StartProcedure::undoDirs},
    {"its place in its allocation's slices (a slice goes with the allocation's last task)", StartStep::Placed,
     &StartProcedure::undoSlices},
    {"its place in the CPU pool (a reservation goes back; the shared tasks get the grown pool)",
     StartStep::Admitted, &StartProcedure::undoCores},
};

void StartProcedure::fail(common::Error error) {
    if (failure_) return;  // one failure; its undo runs once
    failure_ = std::move(error);
    // Its shim, told to leave, may write its aborted mark (or its exit
    // record, after a failed exec) as it goes: the next start of the name looks.
    if (step_ >= StartStep::Spawned) ctx_.records.suspectLeftovers(draft_.unit);
    if (reportWatch_) {
        ctx_.loop.removeFd(reportWatch_);
        reportWatch_ = 0;
    }
    undoFrom(0);
}

void StartProcedure::undoFrom(size_t index) {
    for (; index < std::size(kOwned); ++index) {
        const auto& undo = kOwned[index];
        if (step_ < undo.heldFrom) continue;
        return (this->*undo.run)([this, index, alive = std::weak_ptr<int>(lifetime_)] {
            if (!alive.expired()) undoFrom(index + 1);
        });
    }
    auto error = std::move(*failure_);
    events_.startEnded(draft_, std::move(error));
}

void StartProcedure::undoShim(Next next) {
    // Its go pipe closes: it leaves without running the task (and marks
    // that). A shim told to exec records the failed exec and leaves. Either
    // way it exits; its pidfd says when, through the loop (the exit watch
    // reaps it).
    abortTask(launch_);
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, launch_.shimPid, 0));
    if (pidfd_ < 0) return next();  // gone (and reaped) already
    auto once = std::make_shared<Next>(std::move(next));
    auto finish = [this, once] {
        endWait();
        if (*once) std::exchange(*once, nullptr)();
    };
    pidfdWatch_ = ctx_.loop.addFd(pidfd_, POLLIN, [finish](short) { finish(); });
    const auto wait = failedOverloaded() ? kOverloadedShimExitWait : kShimExitWait;
    waitTimer_ = ctx_.loop.addTimer(common::EventLoop::Clock::now() + wait, [this, finish, wait] {
        waitTimer_ = 0;
        // Told to the caller, not logged: the start's outcome is its answer.
        failure_->message += "; its shim " + std::to_string(launch_.shimPid) + " did not exit within " +
                             std::to_string(std::chrono::seconds(wait).count()) +
                             " s (its files go all the same; it leaves when the kernel lets it)";
        finish();
    });
}

void StartProcedure::endWait() {
    if (pidfdWatch_) ctx_.loop.removeFd(pidfdWatch_);
    pidfdWatch_ = 0;
    if (waitTimer_) ctx_.loop.cancelTimer(waitTimer_);
    waitTimer_ = 0;
    if (pidfd_ >= 0) ::close(pidfd_);
    pidfd_ = -1;
}

void StartProcedure::undoScope(Next next) {
    // The scope is empty now (its shim has left) and systemd collects it by
    // itself; a failed stop is the caller's to know, not only the journal's.
    // On a node too busy to answer the stop in time the caller is not held
    // past its own bus timeout for an empty scope: it hears after
    // kScopeStopWait, told that the stop is on its way.
    auto once = std::make_shared<Next>(std::move(next));
    auto alive = std::weak_ptr<int>(lifetime_);
    waitTimer_ = ctx_.loop.addTimer(common::EventLoop::Clock::now() + kScopeStopWait, [this, once, alive] {
        if (alive.expired() || !*once) return;
        waitTimer_ = 0;
        failure_->message += "; its scope " + draft_.unit + " (empty: nothing of the task ran) is being stopped";
        std::exchange(*once, nullptr)();
    });
    ctx_.systemd.stopUnitAsync(draft_.unit, [this, once, alive](Result<void> stopped) {
        if (alive.expired() || !*once) return;
        endWait();
        // NoSuchUnit: systemd has already collected the empty scope.
        if (!stopped && stopped.error().name != common::errors::kNoSuchUnit)
            failure_->message +=
                "; its scope was not stopped (systemd removes it once empty): " + stopped.error().message;
        std::exchange(*once, nullptr)();
    });
}

void StartProcedure::undoRecord(Next next) {
    // In order with its writes still pending, which must not bring it back.
    ctx_.records.unpersist(draft_.unit, [this, next, alive = std::weak_ptr<int>(lifetime_)](Result<void> gone) {
        if (alive.expired()) return;
        if (!gone)
            failure_->message +=
                "; its record was not removed (a restart finds its start cut off): " + gone.error().message;
        else
            holdings_.processSpecGone();  // removed with the record
        next();
    });
}

void StartProcedure::undoSpool(Next next) {
    holdings_.releaseSpoolEntry(holdingParts());
    next();
}

void StartProcedure::undoProcessSpec(Next next) {
    // A start that reached its record had it removed with the record
    // (undoRecord: the holdings know).
    holdings_.releaseProcessSpec(holdingParts(), [next, alive = std::weak_ptr<int>(lifetime_)](Result<void>) {
        if (!alive.expired()) next();
    });
}

void StartProcedure::undoDirs(Next next) {
    // A start whose worker turn was skipped (or never asked for: held by a
    // fault point before it) made no dirs; and its undo must not wait
    // behind the worker's job that held it up.
    if (!workerTurn_ || workerTurn_->load() == kTurnSkipped) holdings_.dirsNeverMade();
    // Asked now, on the loop: a start of the allocation admitted after this
    // answer finds the allocation's dir made again by its own worker turn,
    // which comes after this one (one worker, in order).
    const bool last = ctx_.lastOfAlloc && ctx_.lastOfAlloc(draft_.allocId, draft_.name);
    // A start that ran out of its start_timeout_ms is answered without
    // waiting for them: the worker may be held by another start's spawn
    // that the kernel holds (under a fork bomb, seconds of the cgroup
    // lock), and the caller was promised its answer by then. They still go
    // on the worker, in order, before any later start's dirs; and nothing
    // of the task ran (its shim has left), so nothing else writes them.
    const bool answerFirst = failedOverloaded();
    Next whenRemoved = answerFirst ? Next{} : std::move(next);
    holdings_.releaseDirs(holdingParts(), last,
                          [this, whenRemoved, alive = std::weak_ptr<int>(lifetime_)](Result<void> removed) {
                              if (alive.expired()) return;
                              // What stays is no task's: the next manager's recovery sweeps it.
                              if (!removed)
                                  failure_->message += "; its dirs were not all removed (the next start of the "
                                                       "manager removes them): " +
                                                       removed.error().message;
                              if (whenRemoved) whenRemoved();
                          });
    if (answerFirst) next();
}

void StartProcedure::undoSlices(Next next) {
    // Its weight leaves the sums; the allocation's slice goes with its last
    // task (a slice systemd made late is stopped after it, in order).
    holdings_.releaseSlicePlace(holdingParts());
    next();
}

void StartProcedure::undoCores(Next next) {
    if (holdings_.releaseCores(holdingParts())) events_.sharedPoolGrew();
    next();
}

}  // namespace taskscope::manager
