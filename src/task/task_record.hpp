#pragma once
// What taskscope knows of one task, and its persisted form. Shared by the
// manager, which keeps one per task, and by the parts around it that hear
// of tasks (the plugin registry): below both, so neither reaches up.

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "spec/task_spec.hpp"
#include "wire/task_state.hpp"

namespace taskscope::task {

using wire::TaskState;

/// How a task's main process ended, as its shim recorded it.
struct ExitStatus {
    int exitCode = -1;  ///< exit status, or 128+signal
    int signal = 0;
    bool oomKilled = false;
    uint64_t finishedAtUs = 0;
    int execError = 0;  ///< errno when the command could not be executed
    std::string execErrorStep;
};

struct TaskRecord {
    std::string allocId;
    std::string name;
    std::string unit;
    std::string objectPath;
    /// The spec as asked (the node's defaults and a plugin's additions are
    /// the start's, not the record's).
    spec::TaskSpec spec;
    /// The caller's text of it, for GetTaskSpec ("as given to StartTask");
    /// an UpdateTask replaces it with the updated spec's.
    std::string specText;
    TaskState state = TaskState::Starting;
    pid_t pid = 0;      ///< the task's main process
    pid_t shimPid = 0;  ///< its parent, which records the exit
    /// The scope's cgroup as the kernel has the task in it (read once when
    /// its scope is made, or asked of systemd); empty until then.
    std::string cgroup;
    /// The task's saved process spec, which exec reads; empty for a task
    /// started before there was one.
    std::string processSpec;
    /// The slice its scope is in (its allocation's, issue 31); empty: a
    /// flat task, in the configured slice itself (an older manager's, or
    /// one started with nested_slices off).
    std::string slice;
    /// Its allocation's slice: `slice` itself, or the allocation slice that
    /// holds `slice` when that is one of its overflow slices. Empty in a
    /// record written before overflow slices: then it is `slice`.
    std::string allocSlice;
    /// Its scope carries its CPU weight (issue 49): false while it is
    /// alone in its allocation, whose slice then carries it.
    bool weightOnScope = true;
    std::set<unsigned> cpus;     ///< AllowedCPUs as applied; empty on cgroup v1
    bool reservedCores = false;  ///< cpus are this task's own, not the shared pool
    uint64_t startedAtUs = 0;
    ExitStatus exit;
    bool exitReported = false;  ///< TaskExited was emitted
    /// While stopping: when the grace ends and every process is killed, in
    /// CLOCK_BOOTTIME microseconds (0: no stop pending). Kept on disk so a
    /// manager restart in the middle of a stop still ends it on time.
    uint64_t killDeadlineUs = 0;
    /// A stop asked for that waits its turn (manager/node/stop_pacer.hpp): its
    /// signal (0: none waits) and grace. Kept on disk so that a manager
    /// restart still sends it.
    int queuedStopSignal = 0;
    int64_t queuedStopGraceMs = 0;
    /// Why a lost task's end is unknown ("" otherwise): its shim vanished
    /// without a record, or its exit record could not be read.
    std::string lostReason;

    bool finished() const { return wire::isFinished(state); }
};

/// The record's file content ("spec" holds specText), and back: the spec
/// is read into its struct, and a record whose spec does not read is an
/// error naming the record.
nlohmann::json toJson(const TaskRecord& record);
common::Result<TaskRecord> recordFromJson(const nlohmann::json& j);

/// RFC 3339 UTC with microseconds, "" for 0.
std::string formatTime(uint64_t usSinceEpoch);

/// "alloc/task", as messages name a task.
inline std::string label(const std::string& allocId, const std::string& task) {
    return allocId + "/" + task;
}
inline std::string label(const TaskRecord& r) {
    return label(r.allocId, r.name);
}

}  // namespace taskscope::task
