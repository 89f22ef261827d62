#pragma once
// The node's cores, split into reserved sets and one shared pool (BRIEF
// capability 3, seeds 000/002). On cgroup v2 a process is in exactly one
// cgroup, so there is no "shared parent" to inherit from: every shared
// task's AllowedCPUs is set to the pool itself and changed whenever a
// reservation comes or goes. Pure bookkeeping; the manager applies it.

#include <map>
#include <set>
#include <string>

#include "common/result.hpp"

namespace taskscope::manager {

class CpuPartitions {
public:
    /// `usable`: the cores tasks may run on at all (the fingerprint's
    /// usable cpuset); `system`: cores kept for the system (config), never
    /// given to tasks.
    CpuPartitions(std::set<unsigned> usable, const std::set<unsigned>& system);

    /// Reserves `count` free cores for `owner`, the lowest-numbered first.
    /// Fails (InsufficientCores, naming asked and free cores) when there
    /// are not enough, or when the reservation would leave no shared core
    /// while `sharedTasks` tasks still need one: an empty cpuset is never
    /// handed out, since cgroup v2 reads it as "inherit every core".
    common::Result<std::set<unsigned>> reserve(const std::string& owner, unsigned count, size_t sharedTasks);

    /// Reserves exactly `cpus` for `owner` (a scheduler chose them):
    /// InsufficientCores when one is not usable or not free, or when the
    /// rest would leave `sharedTasks` running shared tasks no core.
    common::Result<std::set<unsigned>> reserveExact(const std::string& owner, const std::set<unsigned>& cpus,
                                                    size_t sharedTasks);

    /// Re-records a reservation found on a running task after a restart.
    /// Fails when the cores are not usable or already taken.
    common::Result<void> restore(const std::string& owner, const std::set<unsigned>& cpus);

    /// Returns an owner's cores to the shared pool (no-op for a non-owner).
    void release(const std::string& owner);

    /// The pool every task without a reservation runs on; may be empty.
    std::set<unsigned> shared() const;
    /// The pool for a new shared task: InsufficientCores when it is empty.
    common::Result<std::set<unsigned>> sharedForNewTask() const;

    const std::set<unsigned>& usable() const { return usable_; }
    size_t reservations() const { return owners_.size(); }

private:
    std::set<unsigned> free() const;

    std::set<unsigned> usable_;
    std::map<std::string, std::set<unsigned>> owners_;
};

}  // namespace taskscope::manager
