#pragma once
// A task's state as it crosses the bus (GetTask's "state", ListTasks,
// TaskStateChanged, Task1.State) and sits in the manager's records: one
// enum, one spelling of each name.

#include <optional>
#include <string>
#include <string_view>

namespace taskscope::wire {

enum class TaskState { Starting, Running, Stopping, Exited, Lost };

/// "starting", "running", "stopping", "exited", "lost".
std::string toString(TaskState state);
/// The state a name spells; nullopt for any other word.
std::optional<TaskState> parseTaskState(std::string_view name);

/// Exited or lost: the task's end is known (or known to be unknowable).
inline bool isFinished(TaskState s) {
    return s == TaskState::Exited || s == TaskState::Lost;
}

}  // namespace taskscope::wire
