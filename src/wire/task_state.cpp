#include "wire/task_state.hpp"

#include <utility>

namespace taskscope::wire {

namespace {

constexpr std::pair<TaskState, const char*> kStates[] = {
    {TaskState::Starting, "starting"}, {TaskState::Running, "running"}, {TaskState::Stopping, "stopping"},
    {TaskState::Exited, "exited"},     {TaskState::Lost, "lost"},
};

}  // namespace

std::string toString(TaskState state) {
    for (const auto& [s, name] : kStates)
        if (s == state) return name;
    return "unknown";
}

std::optional<TaskState> parseTaskState(std::string_view name) {
    for (const auto& [s, n] : kStates)
        if (name == n) return s;
    return std::nullopt;
}

}  // namespace taskscope::wire
