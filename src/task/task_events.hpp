#pragma once
// What the outside (the bus, the plugin registry) hears of tasks: the one
// interface the manager's registry announces through.

#include <string>

#include "task/task_record.hpp"

namespace taskscope::task {

class TaskEvents {
public:
    virtual ~TaskEvents() = default;
    virtual void taskAdded(const TaskRecord& task) = 0;
    virtual void taskChanged(const TaskRecord& task) = 0;
    virtual void taskExited(const TaskRecord& task) = 0;
    virtual void taskRemoved(const TaskRecord& task) = 0;
    /// A start ended in failure with nothing of it left, with the error's
    /// name (common/error_names.hpp); the task was never added.
    virtual void taskStartFailed(const TaskRecord& task, const std::string& errorName) = 0;
};

}  // namespace taskscope::task
