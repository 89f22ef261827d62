// How a start's fate is settled from what the driver hears (start_fate.hpp).
#include "nomad/start_fate.hpp"

#include "common/bus_error.hpp"
#include "common/error_names.hpp"
#include "wire/task_state.hpp"

namespace taskscope::nomad {

void StartFate::settle(Outcome outcome) {
    // The first word settles it: a start ends once, and later words are of
    // the task's life after its start (it ran, then was lost).
    if (outcome_ == Outcome::Unknown) outcome_ = outcome;
}

void StartFate::heardStarted(const std::string& allocId, const std::string& task) {
    if (mine(allocId, task)) settle(Outcome::Ran);
}

void StartFate::heardStateChanged(const std::string& allocId, const std::string& task, const std::string& state) {
    if (!mine(allocId, task)) return;
    const auto s = wire::parseTaskState(state);
    if (!s || *s == wire::TaskState::Starting) return;
    settle(*s == wire::TaskState::Lost ? Outcome::CutOff : Outcome::Ran);
}

void StartFate::heardStartFailed(const std::string& allocId, const std::string& task, const std::string& errorName) {
    if (!mine(allocId, task)) return;
    if (outcome_ == Outcome::Unknown) errorName_ = errorName;
    settle(Outcome::Failed);
}

void StartFate::heardTask(const common::Result<wire::TaskInfo>& info) {
    if (!info) {
        if (info.error().name == common::errors::kNoSuchTask) settle(Outcome::Failed);
        return;  // the bus still too slow to answer: the signals will tell
    }
    heardStateChanged(allocId_, task_, info->state);
}

common::Result<void> StartFate::verdict(const std::string& unanswered) const {
    using common::makeError;
    switch (outcome_) {
        case Outcome::Ran:
            return {};
        case Outcome::Failed: {
            // Its own error where the manager said it (TaskStartFailed);
            // a task found gone failed for a reason not known here.
            const std::string prefix = common::kBusErrorPrefix;
            if (errorName_.rfind(prefix, 0) == 0)
                return makeError(errorName_.substr(prefix.size()),
                                 unanswered + "; the start failed and left nothing (" + errorName_ +
                                     "; its message went to the unanswered call, GetTask no longer knows the task)");
            return makeError(common::errors::kOverloaded,
                             unanswered + "; the task is not there: its start failed and left nothing (the node is "
                                          "overloaded; retry)");
        }
        case Outcome::CutOff:
            return makeError(common::errors::kOverloaded, unanswered + "; the task's start was cut off (state lost)");
        case Outcome::Unknown:
            break;
    }
    return makeError(common::errors::kNoManager, unanswered + "; its fate is still unknown");
}

}  // namespace taskscope::nomad
