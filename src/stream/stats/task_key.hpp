#pragma once
// A task as the manager's API names it: allocation ID and task name.

#include <compare>
#include <string>

namespace taskscope::stream::stats {

struct TaskKey {
    std::string allocId;
    std::string task;

    auto operator<=>(const TaskKey&) const = default;
    /// "alloc/task", for messages.
    std::string str() const { return allocId + "/" + task; }
};

}  // namespace taskscope::stream::stats
