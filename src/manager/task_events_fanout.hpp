#pragma once
// Several listeners for one TaskManager (the bus and the plugin registry),
// each hearing every event in the order they were added.

#include <vector>

#include "manager/task_manager.hpp"

namespace taskscope::manager {

class TaskEventsFanout final : public TaskEvents {
public:
    explicit TaskEventsFanout(std::vector<TaskEvents*> listeners) : listeners_(std::move(listeners)) {}

    void taskAdded(const TaskRecord& t) override {
        for (auto* l : listeners_) l->taskAdded(t);
    }
    void taskChanged(const TaskRecord& t) override {
        for (auto* l : listeners_) l->taskChanged(t);
    }
    void taskExited(const TaskRecord& t) override {
        for (auto* l : listeners_) l->taskExited(t);
    }
    void taskRemoved(const TaskRecord& t) override {
        for (auto* l : listeners_) l->taskRemoved(t);
    }

private:
    std::vector<TaskEvents*> listeners_;
};

}  // namespace taskscope::manager
