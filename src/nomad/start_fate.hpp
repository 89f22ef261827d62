#pragma once
// The fate of a start whose StartTask the bus left unanswered (its method
// timeout passed on a node too busy to answer in time), as the driver
// learns it: from one GetTask and from the manager's signals (TaskStarted,
// TaskStateChanged, TaskStartFailed), never by asking again and again.
// Nomad must hear the real fate: a task reported failed that runs would be
// started again, elsewhere too (issue 48).
//
// Plain logic, without the bus, so that every way of hearing is tested.

#include <optional>
#include <string>

#include "common/result.hpp"
#include "wire/task_json.hpp"

namespace taskscope::nomad {

class StartFate {
public:
    enum class Outcome {
        Unknown,  ///< nothing heard yet that settles it
        Ran,      ///< it runs, or ran and ended already
        Failed,   ///< it failed and left nothing (the manager's error name known or not)
        CutOff,   ///< it was cut off mid-start (state lost)
    };

    StartFate(std::string allocId, std::string task) : allocId_(std::move(allocId)), task_(std::move(task)) {}

    // The manager's signals; those of other tasks are ignored.
    void heardStarted(const std::string& allocId, const std::string& task);
    void heardStateChanged(const std::string& allocId, const std::string& task, const std::string& state);
    void heardStartFailed(const std::string& allocId, const std::string& task, const std::string& errorName);
    /// GetTask's answer (its NoSuchTask: the start failed and left nothing).
    void heardTask(const common::Result<wire::TaskInfo>& info);

    Outcome outcome() const { return outcome_; }
    bool known() const { return outcome_ != Outcome::Unknown; }
    /// What the driver answers Nomad: nothing for a task that ran, else an
    /// error that says the start may be retried. `unanswered` is the bus's
    /// own error for the lost answer.
    common::Result<void> verdict(const std::string& unanswered) const;

private:
    bool mine(const std::string& allocId, const std::string& task) const {
        return allocId == allocId_ && task == task_;
    }
    void settle(Outcome outcome);

    std::string allocId_, task_;
    Outcome outcome_ = Outcome::Unknown;
    std::string errorName_;  ///< TaskStartFailed's, when that was heard
};

}  // namespace taskscope::nomad
