#pragma once
// The ledger of the nested slice layout (issue 31; names are
// scope/slice_layout.hpp's): which slices exist above the tasks, the tasks'
// places in them, the running tasks' CPU sums and the weights they give
// each slice (scope/slice_weights.hpp), and the decisions those make: which
// slices a task's start makes, which weights change, when an allocation's
// slice goes. Plain state and decisions, like cpu_partitions.hpp: no bus, no
// clock, no event loop. AllocationSlices (allocation_slices.hpp) sends what
// it decides, through WeightPacer (weight_pacer.hpp) for the weights.
//
// A large allocation grows sideways into overflow slices of `cap` scopes
// each (claim()): systemd's cost per start grows with the members of every
// slice above the unit. An overflow slice sits beside its allocation's
// scopes and weighs its tasks' scope weights summed, unscaled.
//
// A task alone in its allocation leaves its CPU weight to its allocation's
// slice (issue 49): its scope carries no CPUWeight, as the slice's weight
// is the task's own share among the other allocations, so the CPU it gets
// is the same. A scope with a weight wants the cpu controller, and on
// cgroup v2 systemd writes cpu.max on every realize of a unit with it
// (cgroup_apply_unified_cpu_quota(), v252 to v260: src/core/cgroup.c), a
// walk of every task group on the node in the kernel each time; without
// it a one-task allocation has one cpu cgroup, its slice. When a second
// task of the allocation starts, every running task of it that asked a
// weight gets it on its scope (enter() says which), and weights stay once
// set. A task with a CPU quota keeps its weight on its scope: it has the
// cpu controller anyway.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "scope/resources.hpp"
#include "scope/slice_layout.hpp"
#include "scope/slice_weights.hpp"
#include "spec/resources.hpp"

namespace taskscope::manager {

class SliceLedger {
public:
    /// What a task weighs, and what its scope carries.
    struct TaskCpu {
        /// Its CPU shares in the sums (scope::sharesOfDefaultWeight() for
        /// a task that asks none).
        uint64_t shares = 0;
        /// The CPUWeight its scope carries when it shares its allocation
        /// (none: it asked no shares, and weighs the kernel's default).
        std::optional<uint64_t> weight;
        /// It carries its weight even alone (a CPU quota on its scope).
        bool keepsWeight = false;
        /// What its scope weighs among its allocation's scopes.
        uint64_t scopeWeight() const { return weight.value_or(scope::kCpuWeightDefault); }
        bool operator==(const TaskCpu&) const = default;
    };
    static TaskCpu taskCpu(const spec::Resources& resources);

    /// Weights that are to change, in the order they changed: (slice,
    /// CPUWeight). Whether systemd holds one already is the sender's to know.
    using WeightChanges = std::vector<std::pair<std::string, uint64_t>>;

    /// What a slice of an entering task's chain needs before its scope.
    enum class Make {
        None,     ///< made, and it has running tasks: only its weight may change
        Wait,     ///< another task's start is making it: wait for that
        Carry,    ///< new: made in the scope's own call (an aux unit)
        Refresh,  ///< known to exist: read, started again if found stopped
        Restart,  ///< a start is under way and it needs making again: another start
    };
    /// What enter() decided.
    struct Entry {
        /// Running tasks of the allocation whose weight goes to their scope
        /// now (a second task is starting), with the weight to set (none:
        /// they weigh the default, nothing to send). Before the new scope.
        std::vector<std::pair<std::string, std::optional<uint64_t>>> toScopes;
        /// The chain's slices, outermost first, and what each needs.
        std::vector<std::pair<std::string, Make>> chain;
        /// Weights of slices not being made that changed.
        WeightChanges weights;
    };
    /// What leave() decided.
    struct Leaving {
        WeightChanges weights;
        /// The allocation's slice to remove now (its last task left), and
        /// the slices in it: none of them gets a weight any more.
        std::vector<std::string> removal;
    };
    /// What removed() decided.
    struct Removal {
        /// Slices that no longer exist as systemd held them (their weight
        /// is not known any more).
        std::vector<std::string> unmade;
        /// Tasks whose entry waited for the removal: they enter now, in order.
        std::vector<std::string> reenter;
    };

    explicit SliceLedger(scope::SliceLayout layout);

    const scope::SliceLayout& layout() const { return layout_; }
    /// The allocation's own slices for `allocId` (InvalidName when the id
    /// does not fit a slice name).
    common::Result<scope::TaskSlices> place(const std::string& allocId, bool reserved) const;
    /// Where task `unit` of `allocId` goes: in the allocation's slice while
    /// it holds fewer than the layout's cap of scopes directly, else in the
    /// first of its overflow slices with room. The place is held for `unit`
    /// from now on (starts under way count), until it enters or leaves.
    common::Result<scope::TaskSlices> claim(const std::string& unit, const std::string& allocId, bool reserved);

    /// The allocation slice's removal is under way (asked before enter()).
    bool removing(const std::string& allocation) const;
    /// Its removal was not sent after all (taken back out of the queue).
    void removalCancelled(const std::string& allocation);
    /// `unit`'s entry waits for the removal of its allocation's slice.
    void waitForRemoval(const std::string& unit, const std::string& allocation);
    /// A task (`unit`) starts running in `slices`, weighing `cpu`: counted,
    /// its sums added, and the slices that need making marked as starting.
    Entry enter(const std::string& unit, const scope::TaskSlices& slices, const TaskCpu& cpu);
    /// The task stopped running: its weight no longer counts.
    WeightChanges stopped(const std::string& unit);
    /// The task's CPU shares changed: its slices' sums follow.
    WeightChanges reweigh(const std::string& unit, const TaskCpu& cpu);
    /// The task is gone; its allocation's slice goes with its last task.
    Leaving leave(const std::string& unit);
    /// A task whose entry waited for a removal is gone before it entered.
    void abandon(const std::string& unit, const std::string& allocation);
    /// The allocation slice's stop is done (or failed: then the dangling
    /// reconciler sees to it): forgotten, unless a start waited for it.
    Removal removed(const std::string& allocation);

    /// A start (or a read) of `slice` ended: it exists when `made`.
    /// False when the slice is no longer known (its entry went meanwhile).
    bool settled(const std::string& slice, bool made);
    /// `slice` is in the ledger.
    bool knows(const std::string& slice) const { return slices_.count(slice) > 0; }
    /// Slices dropped from the ledger since the last call: whatever a
    /// sender holds about them goes too.
    std::vector<std::string> takeDropped();

    /// A task found at recovery (see AllocationSlices::restore()).
    void restore(const std::string& unit, const std::string& slice, const std::string& allocation, const TaskCpu& cpu,
                 bool running, const std::string& cgroup, bool onScope);
    /// The slices that are to have a weight and whose cgroup is known.
    std::map<std::string, std::string> weighedSliceCgroups() const;
    /// After recovery: each parent's children keep the scale systemd holds
    /// them at (`held`, by slice: the weights systemd holds, where known),
    /// and every slice with running tasks gets its weight (the sender
    /// leaves out those it holds already).
    WeightChanges rescale(const std::map<std::string, uint64_t>& held);

    /// The CPUWeight `slice` is to have (none for share and reserve).
    std::optional<uint64_t> weightOf(const std::string& slice) const;
    /// Its weight, when it has running tasks below (else none is due).
    std::optional<uint64_t> weightDue(const std::string& slice) const;
    /// Its cgroup properties (what a slice that is not transient takes too).
    scope::UnitProperties propertiesOf(const std::string& slice) const;
    /// Those and a description: a start's.
    scope::UnitProperties startPropertiesOf(const std::string& slice) const;

    /// The shared pool's cores, from now on part of the share slice's
    /// properties. True when the share slice exists (or is being made) and
    /// is to be told; false when its start will carry them.
    bool setSharedCpus(const std::set<unsigned>& cpus);
    /// The share slice's name.
    std::string shareSlice() const;

    /// See AllocationSlices.
    bool weightOnScope(const std::string& unit) const;
    std::string allocationOf(const std::string& unit) const;
    size_t membersOf(const std::string& slice) const;
    std::set<std::string> allocationSlices() const;
    bool holdsAllocationSlice(const std::string& slice) const;

private:
    struct Member {
        std::vector<std::string> chain;  ///< outermost first, the slice its scope is in last
        std::string allocation;          ///< its allocation's slice (chain.back() or its parent)
        TaskCpu cpu;
        bool running = false;
        bool onScope = false;  ///< its scope carries its weight
    };
    /// Any slice of the tree (share, reserve, bucket, allocation).
    struct Slice {
        std::string parent;  ///< the slice it sits in
        uint64_t sum = 0;    ///< running tasks' shares below it
        /// Running tasks' scope weights below it: what an overflow slice
        /// weighs beside its allocation's scopes, in their units.
        uint64_t scopeWeights = 0;
        size_t members = 0;           ///< tasks below it (allocation slices only: they go with the last)
        size_t running = 0;           ///< of those, running (allocation slices only)
        size_t offScope = 0;          ///< of those, running with their weight left to the slice
        std::set<std::string> units;  ///< the tasks below it (allocation slices only)
        size_t direct = 0;            ///< scopes in it, and places claimed in it (allocation and overflow slices)
        bool overflow = false;        ///< an overflow slice: beside scopes, it weighs its tasks' sum unscaled
        bool removing = false;        ///< its StopUnit is under way (or queued)
        std::vector<std::string> afterRemoval;  ///< units whose entry waits for the stop
        bool starting = false;                  ///< a start (or read) of it is under way
        bool made = false;   ///< known to exist: its start succeeded, or a task was found in it at recovery
        std::string cgroup;  ///< its cgroup, where recovery learnt it ("" otherwise)
    };
    /// An allocation slice with a task, or being removed.
    static bool held(const Slice& slice);
    /// Every running task of allocation slice `alloc` whose weight is its
    /// slice's gets it on its scope now; returns them.
    std::vector<std::pair<std::string, std::optional<uint64_t>>> weightsToScopes(const std::string& alloc);
    /// Counts a member in (or out of) its allocation's running tasks.
    void countRunning(const Member& m, bool in);
    /// Drops `unit`'s claimed place, if it holds one.
    void release(const std::string& unit);
    /// Adds a task (its shares and scope weight) to (or takes it from) the
    /// sums along the chain; the weights that changed, except on
    /// `creating` slices (whose start carries them).
    WeightChanges addToSums(const std::vector<std::string>& chain, const TaskCpu& cpu, bool add,
                            const std::set<std::string>& creating);
    /// Share and reserve slices sit beside the flat tasks of an older
    /// manager, and never compete for cores with each other: they weigh
    /// the default. Below them, siblings share one scale per parent.
    bool weighed(const std::string& slice) const;
    void drop(std::map<std::string, Slice>::iterator it);

    scope::SliceLayout layout_;
    std::map<std::string, Member> members_;                ///< by unit
    std::map<std::string, Slice> slices_;                  ///< by slice name
    std::map<std::string, scope::SiblingWeights> scales_;  ///< by parent slice
    std::map<std::string, std::string> claims_;            ///< by unit: the slice its place was claimed in
    std::optional<std::set<unsigned>> sharedCpus_;
    std::vector<std::string> dropped_;  ///< slices dropped since takeDropped()
};

}  // namespace taskscope::manager
