#pragma once
// A task as org.taskscope.Manager1.GetTask describes it (see the method's
// doc comment in dbus/org.taskscope.Manager1.xml), read once into a struct
// for everyone in the streamer who asks the manager about a task.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::wire {

struct TaskInfo {
    std::string allocId;
    std::string task;
    std::string unit;  ///< its scope
    std::string state;
    int64_t pid = 0;     ///< the task's main process
    std::string cgroup;  ///< the scope's cgroup path, e.g. /nomad.slice/a1-web.scope
    /// The file holding the task's resolved process spec (root's alone),
    /// which exec'd commands are set up from; empty when none was given.
    std::string processSpec;
    /// The task's spec (spec/task_spec.hpp), read leniently (a newer
    /// manager's fields are skipped). Empty when the spec is not a JSON
    /// object (GetTask embeds it as an object; a manager before 0.3 as the
    /// stored string when that did not parse).
    std::optional<spec::TaskSpec> spec;
};

/// Reads GetTask's JSON. Internal when it is not a JSON object, lacks
/// state, pid, unit, cgroup or spec, or has a field of the wrong type
/// (its spec's included).
common::Result<TaskInfo> parseTaskJson(std::string_view json);

}  // namespace taskscope::wire
