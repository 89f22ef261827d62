#pragma once
// What the node's operator is told of the tasks, named by what happened:
// the registry and its procedures say it here and never log, and the
// daemon's edge (daemon/journal_notes.hpp) words it for the journal, at
// its level, once. As systemd's library code: the domain reports, its
// caller logs. Unit tests hear it, or leave it quiet (QuietNotes).

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/result.hpp"
#include "task/task_record.hpp"

namespace taskscope::manager {

class TaskNotes {
public:
    virtual ~TaskNotes() = default;

    // A task's life.
    /// It runs; `profile`: where its start spent its time (StepClock's
    /// summary), empty when nobody reads it (wantsDetail()).
    virtual void started(const task::TaskRecord& task, const std::string& profile) = 0;
    virtual void exited(const task::TaskRecord& task) = 0;
    /// Its end cannot be known: lost, with its record's lostReason.
    virtual void lost(const task::TaskRecord& task) = 0;
    /// Its shim died without an exit record; it runs on while its scope
    /// has processes.
    virtual void shimDiedWithoutRecord(const task::TaskRecord& task) = 0;
    virtual void stopping(const task::TaskRecord& task, int signal, int64_t graceMs) = 0;
    virtual void stopQueued(const task::TaskRecord& task, size_t inFlight, size_t waiting) = 0;
    virtual void updated(const task::TaskRecord& task, const std::string& what) = 0;
    /// A restart found it running (`how`: what it found it doing).
    virtual void readopted(const task::TaskRecord& task, const std::string& how) = 0;

    // The manager's own comings and goings.
    /// After recovery: tasks found running, of those recorded; starts a
    /// manager before did not finish (removed: they never ran); dirs no
    /// record names (swept).
    virtual void recovered(size_t readopted, size_t recorded, size_t neverRan, size_t dirsSwept) = 0;
    virtual void draining(size_t startsUnderWay) = 0;
    virtual void drainCutShort(size_t startsUnderWay) = 0;

    /// Something not done, and left as it is (systemd's ", ignoring"):
    /// `what` failed because of `why`; `then` says what follows from it
    /// (may be empty). A Detail is for debugging only.
    enum class Weight { Detail, Warning, Error };
    virtual void notDone(Weight weight, const std::string& what, const common::Error& why,
                         const std::string& then = {}) = 0;

    /// Whether details are read at all (a start's profile costs a string).
    virtual bool wantsDetail() const = 0;
};

/// Says nothing (unit tests that do not listen).
class QuietNotes final : public TaskNotes {
public:
    void started(const task::TaskRecord&, const std::string&) override {}
    void exited(const task::TaskRecord&) override {}
    void lost(const task::TaskRecord&) override {}
    void shimDiedWithoutRecord(const task::TaskRecord&) override {}
    void stopping(const task::TaskRecord&, int, int64_t) override {}
    void stopQueued(const task::TaskRecord&, size_t, size_t) override {}
    void updated(const task::TaskRecord&, const std::string&) override {}
    void readopted(const task::TaskRecord&, const std::string&) override {}
    void recovered(size_t, size_t, size_t, size_t) override {}
    void draining(size_t) override {}
    void drainCutShort(size_t) override {}
    void notDone(Weight, const std::string&, const common::Error&, const std::string&) override {}
    bool wantsDetail() const override { return false; }
};

}  // namespace taskscope::manager
