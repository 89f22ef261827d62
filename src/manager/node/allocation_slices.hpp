#pragma once
// The slices above the tasks in the nested layout (issue 31; the names are
// scope/slice_layout.hpp's), as the tasks' code sees them: SliceLedger
// (slice_ledger.hpp) decides, WeightPacer (weight_pacer.hpp) sends the
// weights and removals, and this class makes the slices before a task's
// scope, with the calls that wait on them. Each slice is made before the
// first task below it runs, with its weight; weights kept equal to the sums of the running tasks'
// below them (scope/slice_weights.hpp); the shared pool's cores set once,
// on the share slice; an allocation's slice removed with its last task.
//
// A slice that systemd makes implicitly, because a scope names it in
// Slice=, has no weight: so a slice is made explicitly, with its
// properties, the first time a task goes below it. A new slice is made in
// the scope's own StartTransientUnit call (as an aux unit: one call and one
// transaction for a new allocation's first task, not one per slice); one
// that another task's start is making is waited for. An allocation's slice
// (or overflow slice) that is known to exist is read whenever a running
// task comes back to it: one an operator stopped meanwhile is started
// again, with its properties. Share
// and bucket slices, once made, only get their weight set, and only when
// it differs from the one systemd holds. A large allocation grows into
// overflow slices of `cap` scopes each (claim()). Calls about the slices
// are sent just before the scope's, not waited for first: systemd handles
// one connection's calls in order, and a scope whose slice has a start job
// queued waits for that job (a unit with a cgroup gets After= and
// Requires= on its slice: systemd src/core/unit.c,
// unit_add_slice_dependencies()).
//
// The weights of slices that exist already follow the sums a little later,
// paced per slice and per node (weight_pacer.hpp). A task alone in its
// allocation leaves its CPU weight to its allocation's slice (issue 49;
// slice_ledger.hpp): when a second task of the allocation starts, every
// running task of it that asked a weight gets it on its scope
// (SetUnitProperties, sent before the new scope's start on the same
// connection, so in systemd before its job and before the new task's first
// instruction), and the new scope is started with its own.
//
// The allocation's slice is removed (StopUnit) when its last task is
// forgotten; a start that comes while that stop is under way waits for it
// and makes the slice again (the start wins).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "manager/node/slice_ledger.hpp"
#include "manager/node/weight_pacer.hpp"
#include "scope/slice_layout.hpp"
#include "scope/systemd_client.hpp"
#include "spec/resources.hpp"

namespace taskscope::manager {

class AllocationSlices {
public:
    using Completion = scope::SystemdClient::Completion;

    /// How long a weight waits, at most, for the starts under way.
    static constexpr std::chrono::milliseconds kFlushDelay = WeightPacer::kFlushDelay;
    /// The least time between two weights sent to one slice.
    static constexpr std::chrono::milliseconds kWeightInterval = WeightPacer::kWeightInterval;
    /// The least time between two weights sent to any slices.
    static constexpr std::chrono::milliseconds kNodeWeightInterval = WeightPacer::kNodeWeightInterval;

    /// Without a loop, weights wait only for the starts under way (and are
    /// not paced: there is no clock to wait on).
    AllocationSlices(scope::SliceLayout layout, scope::SystemdClient& systemd, common::EventLoop* loop = nullptr,
                     std::chrono::milliseconds weightInterval = kWeightInterval,
                     std::chrono::milliseconds nodeWeightInterval = kNodeWeightInterval);
    ~AllocationSlices();
    AllocationSlices(const AllocationSlices&) = delete;
    AllocationSlices& operator=(const AllocationSlices&) = delete;

    const scope::SliceLayout& layout() const { return ledger_.layout(); }
    /// The allocation's own slices for `allocId` (pure; InvalidName when
    /// the id does not fit a slice name).
    common::Result<scope::TaskSlices> place(const std::string& allocId, bool reserved) const {
        return ledger_.place(allocId, reserved);
    }
    /// Where task `unit` of `allocId` goes (SliceLedger::claim()): the place
    /// is held for `unit` from now on, until it enters or leaves.
    common::Result<scope::TaskSlices> claim(const std::string& unit, const std::string& allocId, bool reserved);

    /// What a task weighs, and what its scope carries.
    using TaskCpu = SliceLedger::TaskCpu;
    static TaskCpu taskCpu(const spec::Resources& resources) { return SliceLedger::taskCpu(resources); }

    /// Starts a task's scope, making `aux` in the same call, with the
    /// task's CPUWeight when `carryWeight` (and none otherwise); `started`
    /// gets the scope's outcome.
    using ScopeStart = std::function<void(const scope::AuxUnits& aux, bool carryWeight, Completion started)>;
    /// Told when a running task's weight moved to its scope (a second task
    /// of its allocation started): what GetTask shows of it changed.
    using WeightMoved = std::function<void(const std::string& unit)>;
    void onWeightMoved(WeightMoved moved) { weightMoved_ = std::move(moved); }
    /// Who hears what systemd refused and was left as it is (nothing here
    /// logs): a weight, a slice's start or removal.
    void setNotDone(NotDone notDone) {
        notDone_ = notDone;
        pacer_.setNotDone(std::move(notDone));
    }

    /// A task (`unit`) is about to start in `slices`, weighing `cpu`:
    /// it counts from now on. Its scope is started through `startScope`
    /// (after a removal of the allocation's slice under way), carrying the
    /// slices above it that are new; calls for the others that need one
    /// are sent just before. `scopeStarted` gets the scope's outcome (a
    /// call refused because a carried slice existed after all is made
    /// again without them, once they are started on their own); `made`
    /// the outcome of the slices' jobs (also of those an earlier task's
    /// start is making).
    void enter(const std::string& unit, const scope::TaskSlices& slices, const TaskCpu& cpu, ScopeStart startScope,
               Completion scopeStarted, Completion made);
    /// The task stopped running: its weight no longer counts.
    void stopped(const std::string& unit);
    /// The task's CPU shares changed (UpdateTask): its slices' sums follow.
    void reweigh(const std::string& unit, const TaskCpu& cpu);
    /// The task's scope carries its weight (or is to): it shares its
    /// allocation, keeps its weight, or was found so. False for a task
    /// not known here.
    bool weightOnScope(const std::string& unit) const { return ledger_.weightOnScope(unit); }
    /// The task is gone (forgotten, or its start failed); its allocation's
    /// slice goes with its last task.
    void leave(const std::string& unit);
    /// A task found at recovery in `slice` (its record's: its allocation's
    /// slice, `allocation`, or one of its overflow slices), whose slices
    /// exist already; `cgroup` is its scope's ("" when its record has none),
    /// which tells where its slices' cgroups are; `onScope`: its scope
    /// carries its weight. Weights are set by reapplyWeights().
    void restore(const std::string& unit, const std::string& slice, const std::string& allocation, const TaskCpu& cpu,
                 bool running, const std::string& cgroup = {}, bool onScope = true) {
        ledger_.restore(unit, slice, allocation, cpu, running, cgroup, onScope);
    }
    /// After recovery, the slices that are to have a weight and whose
    /// cgroup is known (from a restored task's), by slice name: where the
    /// weights they hold can be read.
    std::map<std::string, std::string> weighedSliceCgroups() const { return ledger_.weighedSliceCgroups(); }
    /// The weights the slices hold now (read from their cgroups): the
    /// weights that are right already are not sent again. A node restarted
    /// with 10,000 allocations otherwise sent PID 1 10,000 calls.
    void heldWeights(const std::map<std::string, uint64_t>& held);
    /// After recovery: every weight that differs from what its slice holds
    /// (all of them, where that is not known) set again: the tasks below
    /// may have changed while no manager was there.
    void reapplyWeights();

    /// The shared pool's cores: one SetUnitProperties on the share slice
    /// (once it exists; it is made with them).
    void setSharedCpus(const std::set<unsigned>& cpus, Completion done);

    /// The allocation's slice of `unit`'s task ("" when not known here).
    std::string allocationOf(const std::string& unit) const { return ledger_.allocationOf(unit); }
    /// Tasks known in the allocation slice `slice` (0: none).
    size_t membersOf(const std::string& slice) const { return ledger_.membersOf(slice); }
    /// Every allocation slice with a task, or being removed.
    std::set<std::string> allocationSlices() const { return ledger_.allocationSlices(); }
    /// `slice` is one of allocationSlices(), asked of one: the reconciler
    /// asks it of every slice in a pass, and building the set each time
    /// held the manager's loop for minutes on a node of 10,000 allocations.
    bool holdsAllocationSlice(const std::string& slice) const { return ledger_.holdsAllocationSlice(slice); }

private:
    /// An entry that waits for the removal of its allocation's slice.
    struct Deferred {
        scope::TaskSlices slices;
        TaskCpu cpu;
        ScopeStart startScope;
        Completion scopeStarted;
        Completion made;
    };
    void enterNow(const std::string& unit, const scope::TaskSlices& slices, const TaskCpu& cpu,
                  const ScopeStart& startScope, Completion scopeStarted, Completion made);
    /// Sends the weights that moved to running tasks' scopes.
    void weightsToScopes(const std::vector<std::pair<std::string, std::optional<uint64_t>>>& moved);
    /// Starts `unit`'s scope (with its weight if it is to carry it) with
    /// the `carried` slices (marked starting) in its call; when that fails,
    /// they are started on their own, and on UnitExists the scope is asked
    /// again without them.
    void startCarrying(const std::string& unit, const std::vector<std::string>& carried, const ScopeStart& startScope,
                       Completion scopeStarted);
    /// Hands the ledger's weight changes to the pacer, in order.
    void setWeights(const SliceLedger::WeightChanges& changes);
    /// Whatever is held about slices the ledger dropped goes too.
    void forgetDropped();
    /// The start of a slice already marked starting, on its own.
    void sendStart(const std::string& slice);
    /// A slice known to exist, found active (its weight follows), or
    /// started again with its properties (an operator stopped it).
    void refresh(const std::string& slice);
    /// The end of a slice's start (or refresh), for everyone waiting.
    void settle(const std::string& slice, common::Result<void> r);
    /// Its stop is done (or failed): a start that waited makes it again.
    void removed(const std::string& slice, common::Result<void> stopped);

    SliceLedger ledger_;
    scope::SystemdClient& systemd_;
    WeightPacer pacer_;
    WeightMoved weightMoved_;
    NotDone notDone_;
    std::map<std::string, Deferred> deferred_;                ///< by unit: entries waiting for a removal
    std::map<std::string, std::vector<Completion>> pending_;  ///< by slice: waiting for its start under way
    /// Expires with this object: systemd's answers that come after it do nothing.
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
};

}  // namespace taskscope::manager
