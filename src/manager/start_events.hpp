#pragma once
// The steps of a start, and what a start tells the registry: the one small
// interface between the two (start_procedure.hpp includes it, the registry
// implements it; neither includes the other's class).

#include "common/result.hpp"
#include "task/task_record.hpp"

namespace taskscope::manager {

/// The steps of a start, in the order it reaches them. What each owns from
/// then on is kOwned's (start_procedure.cpp); the registry owns, from
/// Admitted on, the task's entry, its place in the CPU pool and its dirs.
enum class StartStep {
    Admitted,   ///< the entry exists ("starting"); its spec is parsed
    Resolved,   ///< spec resolved on this node: user, binary, plugin, dirs, cores, network, properties
    Preparing,  ///< on the start worker: log dir, spool entry, process spec, the shim's spawn
    Spawned,    ///< the shim exists, holding the task before its fork: the start no longer counts in the fd budget
    Launched,   ///< the shim reported the task's pid (stopped before exec)
    Recorded,   ///< its record asked to disk, as running
    ScopeMade,  ///< systemd made its scope with the task's pid in it
    Released,   ///< told to exec; the shim's next report is the outcome
    Running,    ///< it runs its command, its record on disk: done
};

const char* toString(StartStep step);

class StartEvents {
public:
    virtual ~StartEvents() = default;
    /// The start reached `step`; `draft` is the task as the start has it
    /// (cores, pid, cgroup as far as known).
    virtual void startProgressed(const task::TaskRecord& draft, StartStep step) = 0;
    /// The start is over, its undo list run if it failed: the task as it
    /// runs, or why it does not. The last thing a start does.
    virtual void startEnded(const task::TaskRecord& draft, common::Result<void> outcome) = 0;
};

}  // namespace taskscope::manager
