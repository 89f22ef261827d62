#pragma once
// The manager's edge toward the journal: what the registry reports of its
// tasks (tasks/task_notes.hpp), worded once, each at its level. The
// registry names what happened; the wording and the levels live here.

#include "manager/tasks/task_notes.hpp"

namespace taskscope::manager {

class JournalNotes final : public TaskNotes {
public:
    void started(const task::TaskRecord& task, const std::string& profile) override;
    void exited(const task::TaskRecord& task) override;
    void lost(const task::TaskRecord& task) override;
    void shimDiedWithoutRecord(const task::TaskRecord& task) override;
    void stopping(const task::TaskRecord& task, int signal, int64_t graceMs) override;
    void stopQueued(const task::TaskRecord& task, size_t inFlight, size_t waiting) override;
    void updated(const task::TaskRecord& task, const std::string& what) override;
    void readopted(const task::TaskRecord& task, const std::string& how) override;
    void recovered(size_t readopted, size_t recorded, size_t neverRan, size_t dirsSwept) override;
    void draining(size_t startsUnderWay) override;
    void drainCutShort(size_t startsUnderWay) override;
    void notDone(Weight weight, const std::string& what, const common::Error& why, const std::string& then) override;
    bool wantsDetail() const override;
};

}  // namespace taskscope::manager
