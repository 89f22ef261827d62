// The registry's reports as journal lines (journal_notes.hpp). Levels: a
// task's own start, a re-adoption and a queued stop are debug, because a
// line per task into a journald busy with a burst of starts held the loop
// for milliseconds (bench/profile-start.sh: "log"), and systemd already
// logs each scope's start with its description ("Started taskscope task
// a/t"); a drain queues thousands of stops, each logged when it goes.
#include "manager/daemon/journal_notes.hpp"

#include <spdlog/spdlog.h>

#include "common/signals.hpp"

namespace taskscope::manager {

using task::label;

void JournalNotes::started(const task::TaskRecord& t, const std::string& profile) {
    spdlog::debug("Started task {} as pid {} in {}", label(t), t.pid, t.unit);
    if (!profile.empty()) spdlog::debug("Start of {} took {}", label(t), profile);
}

void JournalNotes::exited(const task::TaskRecord& t) {
    spdlog::info("Task {} exited: code {}, signal {}{}", label(t), t.exit.exitCode, t.exit.signal,
                 t.exit.oomKilled ? ", OOM killed" : "");
}

void JournalNotes::lost(const task::TaskRecord& t) {
    spdlog::warn("Task {} is lost: {}", label(t), t.lostReason);
}

void JournalNotes::shimDiedWithoutRecord(const task::TaskRecord& t) {
    spdlog::error(
        "The shim {} of task {} died without an exit record; the task stays running while its scope {} "
        "has processes (no exit code can be known)",
        t.shimPid, label(t), t.unit);
}

void JournalNotes::stopping(const task::TaskRecord& t, int signal, int64_t graceMs) {
    spdlog::info("Stopping task {} with {} and {} ms grace", label(t), common::signalName(signal), graceMs);
}

void JournalNotes::stopQueued(const task::TaskRecord& t, size_t inFlight, size_t waiting) {
    spdlog::debug("Stop of task {} waits its turn: {} stops in flight, {} waiting", label(t), inFlight, waiting);
}

void JournalNotes::updated(const task::TaskRecord& t, const std::string& what) {
    spdlog::info("Updated task {}: {}", label(t), what);
}

void JournalNotes::readopted(const task::TaskRecord& t, const std::string& how) {
    spdlog::debug("Re-adopted task {} (pid {}, unit {}){}{}", label(t), t.pid, t.unit, how.empty() ? "" : "; ", how);
}

void JournalNotes::recovered(size_t readopted, size_t recorded, size_t neverRan, size_t dirsSwept) {
    if (readopted) spdlog::info("Re-adopted {} running tasks of {} recorded", readopted, recorded);
    if (neverRan)
        spdlog::info("Removed {} tasks whose start the previous manager did not finish: they never ran", neverRan);
    if (dirsSwept)
        spdlog::info(
            "Removed the dirs of {} tasks or allocations no task record names (starts cut off before their record "
            "was written)",
            dirsSwept);
}

void JournalNotes::draining(size_t startsUnderWay) {
    spdlog::info("Stopping: waiting for {} starts under way; new starts are refused", startsUnderWay);
}

void JournalNotes::drainCutShort(size_t startsUnderWay) {
    spdlog::warn(
        "{} starts still under way at the end of the drain; exiting: their shims leave without running them, and "
        "the next start removes them",
        startsUnderWay);
}

void JournalNotes::notDone(Weight weight, const std::string& what, const common::Error& why, const std::string& then) {
    const auto level = weight == Weight::Error     ? spdlog::level::err
                       : weight == Weight::Warning ? spdlog::level::warn
                                                   : spdlog::level::debug;
    spdlog::log(level, "Failed to {}: {}{}{}", what, why.message, then.empty() ? "" : "; ", then);
}

bool JournalNotes::wantsDetail() const { return spdlog::should_log(spdlog::level::debug); }

}  // namespace taskscope::manager
