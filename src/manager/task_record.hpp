#pragma once
// What the manager knows of one task, and its persisted form.

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.hpp"

namespace taskscope::manager {

enum class TaskState { Starting, Running, Stopping, Exited, Lost };

std::string toString(TaskState state);

/// How a task's main process ended, as the shim recorded it.
struct ExitStatus {
    int exitCode = -1;  ///< exit status, or 128+signal
    int signal = 0;
    bool oomKilled = false;
    uint64_t finishedAtUs = 0;
    int execError = 0;  ///< errno when the command could not be executed
    std::string execErrorStep;
};

/// Parses the shim's key=value exit file.
common::Result<ExitStatus> parseExitFile(const std::string& text);

struct TaskRecord {
    std::string allocId;
    std::string name;
    std::string unit;
    std::string objectPath;
    std::string specJson;
    TaskState state = TaskState::Starting;
    pid_t pid = 0;      ///< the task's main process
    pid_t shimPid = 0;  ///< its parent, which records the exit
    std::string cgroup;
    /// The task's saved process spec (LaunchPaths::processSpec), which exec
    /// reads; empty for a task started before there was one.
    std::string processSpec;
    std::set<unsigned> cpus;     ///< AllowedCPUs as applied; empty on cgroup v1
    bool reservedCores = false;  ///< cpus are this task's own, not the shared pool
    uint64_t startedAtUs = 0;
    ExitStatus exit;
    bool exitReported = false;  ///< TaskExited was emitted
    /// While stopping: when the grace ends and every process is killed, in
    /// CLOCK_BOOTTIME microseconds (0: no stop pending). Kept on disk so a
    /// manager restart in the middle of a stop still ends it on time.
    uint64_t killDeadlineUs = 0;
    /// Why a lost task's end is unknown ("" otherwise): its shim vanished
    /// without a record, or its exit record could not be read.
    std::string lostReason;

    bool finished() const { return state == TaskState::Exited || state == TaskState::Lost; }
};

nlohmann::json toJson(const TaskRecord& record);
common::Result<TaskRecord> recordFromJson(const nlohmann::json& j);

/// RFC 3339 UTC with microseconds, "" for 0.
std::string formatTime(uint64_t usSinceEpoch);

}  // namespace taskscope::manager
