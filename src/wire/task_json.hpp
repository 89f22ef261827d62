#pragma once
// A task as org.taskscope.Manager1.GetTask describes it (see the method's
// doc comment in dbus/org.taskscope.Manager1.xml): one struct, one writer
// (the manager's) and one reader (every client's: taskscopectl, the
// streamer, the Nomad driver). The keys are spelled in task_json.cpp only.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "spec/task_spec.hpp"
#include "wire/task_state.hpp"

namespace taskscope::wire {

struct TaskInfo {
    std::string allocId;
    std::string task;
    std::string unit;        ///< its scope
    std::string objectPath;  ///< its org.taskscope.Task1 object
    std::string state;       ///< toString(TaskState); a newer manager's word is kept as it is
    int64_t pid = 0;         ///< the task's main process
    int64_t shimPid = 0;     ///< its parent, which records its exit; 0 once it ended
    std::string cgroup;      ///< the scope's cgroup path, e.g. /nomad.slice/a1-web.scope
    /// The slice its scope is in, e.g. nomad-share-b1f-a1.slice; a flat
    /// task's is the configured slice ("" while not known).
    std::string slice;
    /// Its allocation's slice; "" for a flat task (started by a manager
    /// before the nested layout, or with nested_slices off).
    std::string allocSlice;
    /// The file holding the task's resolved process spec (root's alone),
    /// which exec'd commands are set up from; empty when none was given.
    std::string processSpec;
    std::string cpus;  ///< AllowedCPUs as a CPU list
    bool reservedCores = false;
    /// The task's CPU weight among its allocation's tasks (its shares
    /// mapped, or the kernel's default 100), and the unit that carries it:
    /// its scope, or its allocation's slice while it runs alone there
    /// (whose own CPUWeight is the allocation's share among its siblings).
    uint64_t cpuWeight = 0;
    std::string cpuWeightUnit;
    std::optional<int> exitCode;  ///< once the task has ended
    int signal = 0;
    bool oomKilled = false;
    std::string startedAt;   ///< RFC 3339, "" before
    std::string finishedAt;  ///< RFC 3339, "" while it runs
    std::string lostReason;  ///< a lost task's
    std::string execError;   ///< "STEP: errno N" when its command could not run
    /// The task's spec (spec/task_spec.hpp), read leniently (a newer
    /// manager's fields are skipped). Empty when the spec is not a JSON
    /// object (GetTask embeds it as an object; a manager before 0.3 as the
    /// stored string when that did not parse).
    std::optional<spec::TaskSpec> spec;

    /// Its state is one this version knows and the task has ended.
    bool finished() const {
        const auto s = parseTaskState(state);
        return s && isFinished(*s);
    }
};

/// GetTask's JSON for a task (the manager's side).
std::string toJson(const TaskInfo& task);

/// Reads GetTask's JSON. Internal when it is not a JSON object, lacks
/// state, pid, unit, cgroup or spec, or has a field of the wrong type
/// (its spec's included).
common::Result<TaskInfo> parseTaskJson(std::string_view json);

}  // namespace taskscope::wire
