#pragma once
// The node's cores as the manager hands them out (BRIEF capability 3):
// which task runs on the shared pool, which holds a reservation, and when
// the shared pool has changed so that the tasks on it must be moved. The
// arithmetic is CpuPartitions'; this is the bookkeeping around it. It
// answers and decides; the registry applies what it says through systemd
// (one SetUnitProperties per shared task, queued in the task's own queue).
//
// On cgroup v2 a process is in exactly one cgroup, so there is no "shared
// parent" to inherit from: every shared task's AllowedCPUs is the pool
// itself. On cgroup v1 systemd ignores AllowedCPUs: nothing is assigned,
// and a reservation is refused.

#include <map>
#include <optional>
#include <set>
#include <string>

#include "common/result.hpp"
#include "manager/node/cpu_partitions.hpp"
#include "spec/resources.hpp"

namespace taskscope::manager {

class CpuPool {
public:
    /// `usable`: the cores tasks may run on (the fingerprint's usable
    /// cpuset); `system`: kept for the system; `unified`: cgroup v2.
    CpuPool(std::set<unsigned> usable, const std::set<unsigned>& system, bool unified);

    /// A task counts as one on the shared pool from its admission (its
    /// cores are not known yet: a reservation must leave it a core) until
    /// it leaves.
    void join(const std::string& unit);

    struct Assignment {
        std::set<unsigned> cpus;  ///< its AllowedCPUs; empty: none set (v1, or no usable cpuset)
        bool reserved = false;    ///< its own, not the shared pool
    };
    /// Its cores for a start: a reservation when it asks cores or a cpuset
    /// (InsufficientCores with the numbers; NotSupported on v1), else the
    /// shared pool.
    common::Result<Assignment> assign(const std::string& unit, const spec::Resources& resources);

    /// A running task's reservation found after a restart (also joins it).
    common::Result<void> restore(const std::string& unit, const std::set<unsigned>& cpus);

    /// The task needs no cores any more (it ended, was forgotten, or its
    /// start failed): its reservation goes back. True when the shared pool
    /// grew by it.
    bool leave(const std::string& unit);

    /// While recovery rebuilds the reservations, the pool is not final:
    /// nothing is to be applied.
    void setRecovering(bool recovering) { recovering_ = recovering; }

    /// The pool the shared tasks are to be moved to, when it changed since
    /// the last time this said so (one pass per change, whatever the burst
    /// of reservations behind it); nullopt otherwise, while recovering, on
    /// v1, and when it is empty (v2 would read an empty cpuset as "every
    /// core").
    std::optional<std::set<unsigned>> poolToApply();
    /// A move failed: the next pass looks at every task again.
    void forgetApplied() { applied_.clear(); }

    /// Shared tasks get AllowedCPUs at all (v2 with a usable cpuset).
    bool active() const { return unified_ && !partitions_.usable().empty(); }
    std::set<unsigned> shared() const { return partitions_.shared(); }
    /// The shared pool as a CPU list; "" on v1.
    std::string sharedText() const;

private:
    /// Shared tasks but `except`.
    size_t sharedTasks(const std::string& except) const;

    CpuPartitions partitions_;
    bool unified_;
    bool recovering_ = false;
    std::map<std::string, bool> members_;  ///< unit -> holds a reservation
    std::set<unsigned> applied_;           ///< the pool the last pass gave out
};

}  // namespace taskscope::manager
