#pragma once
// Several listeners for one TaskRegistry (the bus and the plugin registry),
// each hearing every event in the order they were added.

#include <vector>

#include "task/task_events.hpp"

namespace taskscope::manager {

class TaskEventsFanout final : public task::TaskEvents {
public:
    explicit TaskEventsFanout(std::vector<task::TaskEvents*> listeners) : listeners_(std::move(listeners)) {}

    void taskAdded(const task::TaskRecord& t) override {
        for (auto* l : listeners_) l->taskAdded(t);
    }
    void taskChanged(const task::TaskRecord& t) override {
        for (auto* l : listeners_) l->taskChanged(t);
    }
    void taskExited(const task::TaskRecord& t) override {
        for (auto* l : listeners_) l->taskExited(t);
    }
    void taskRemoved(const task::TaskRecord& t) override {
        for (auto* l : listeners_) l->taskRemoved(t);
    }
    void taskStartFailed(const task::TaskRecord& t, const std::string& errorName) override {
        for (auto* l : listeners_) l->taskStartFailed(t, errorName);
    }

private:
    std::vector<task::TaskEvents*> listeners_;
};

}  // namespace taskscope::manager
