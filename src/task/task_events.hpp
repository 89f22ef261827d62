#pragma once
// What the outside (the bus, the plugin registry) hears of tasks: the one
// interface the manager's registry announces through.

#include "task/task_record.hpp"

namespace taskscope::task {

class TaskEvents {
public:
    virtual ~TaskEvents() = default;
    virtual void taskAdded(const TaskRecord& task) = 0;
    virtual void taskChanged(const TaskRecord& task) = 0;
    virtual void taskExited(const TaskRecord& task) = 0;
    virtual void taskRemoved(const TaskRecord& task) = 0;
};

}  // namespace taskscope::task
