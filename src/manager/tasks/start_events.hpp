#pragma once
// The steps of a start, and what a start tells the registry: the one small
// interface between the two (start_procedure.hpp includes it, the registry
// implements it; neither includes the other's class).

#include "common/result.hpp"
#include "task/task_record.hpp"

namespace taskscope::manager {

/// The steps of a start, in the order it reaches them. What each owns from
/// then on is kOwned's (start_procedure.cpp): everything a start takes is
/// its own until it runs or has given it back; the registry owns the
/// task's entry alone.
enum class StartStep {
    Admitted,   ///< the entry exists ("starting"), its spec parsed; a place in the CPU pool
    Placed,     ///< on the loop: the plugin hook asked, its cores and its place in its allocation's slices
    Resolved,   ///< its paths, network and scope properties worked out
    Preparing,  ///< on the start worker: user and binary, node checks, task dirs, log dir, spool entry,
                ///< process spec, the shim's spawn
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
    /// A failed start gave its cores back and the shared pool grew: the
    /// shared tasks are to be given it.
    virtual void sharedPoolGrew() = 0;
    /// The start is over, its undo list run if it failed: the task as it
    /// runs, or why it does not. The last thing a start does.
    virtual void startEnded(const task::TaskRecord& draft, common::Result<void> outcome) = 0;
};

}  // namespace taskscope::manager
