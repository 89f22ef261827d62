#pragma once
// The slices above the tasks in the nested layout (issue 31; the names are
// scope/slice_layout.hpp's): each made before the first task below it runs,
// with its weight; weights kept equal to the sums of the running tasks'
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
// The weights of slices that exist already follow the sums a little later:
// they are sent once no task's scope start is waiting for systemd (at the
// latest kFlushDelay after the first change), each slice's last weight in
// one call, and only when it differs from the one systemd holds. A weight
// is a share among siblings, not a limit, so it need not be there before
// a task's first instruction; sent before the scope's job ran, it would
// hold that job back (systemd takes bus calls, at SD_EVENT_PRIORITY_NORMAL,
// before it runs queued jobs, at SD_EVENT_PRIORITY_IDLE: src/core/dbus.c,
// src/core/manager.c), and a burst of starts into one bucket sets its
// weight once, not once per task.
//
// A slice gets a new weight at most once per interval (the manager's
// slice_weight_interval_ms, kWeightInterval by default): a change
// that comes sooner after the last one sent waits for the interval (and
// is sent as the slice's weight then is). On cgroup v2 every weight set
// costs the whole node more than its own slice: systemd rewrites the
// slice's cpu.max along with cpu.weight on each apply of its CPU settings
// (cgroup_apply_unified_cpu_quota(), unconditional in v252 and v256-rc4:
// src/core/cgroup.c), and the kernel checks each cpu.max write against
// every task group on the node (tg_set_cfs_bandwidth() ->
// __cfs_schedulable() -> walk_tg_tree(), kernel/sched/core.c). At 10,000
// tasks that walk is two cpu cgroups per one-task allocation; natively
// each start into a bucket changed that bucket's weight (bench/README,
// "Why PID 1's cost per start grows with the node"). Paced, the buckets
// cost at most their number of calls a second, however fast the node
// fills or drains; what a bucket's tasks get of the CPU lags its
// allocations by at most the interval.
//
// Node-wide, the slices' weights go at most one per node interval (the
// manager's slice_weight_node_interval_ms, kNodeWeightInterval by
// default), the slice whose weight systemd holds is furthest off its sum
// (relatively) first. Per slice alone, 64 buckets under a fill still cost
// up to 64 calls a second, in the test bed nearly one per start, and each
// is a cpu.max write whose walk grows with the node: PID 1's cost per
// start at 5,000 tasks was 1.35x its cost at 300 with them, 1.27x with
// them paced a minute apart (bench/README.md, stop 47); in one boot, 1.23x
// paced per slice only and 0.99x paced node-wide too, 6% less per start at
// 5,000 (stop 48). A fill's small drifts then wait, while a large
// allocation's bucket goes first.
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
// weight gets it on its scope (SetUnitProperties, sent before the new
// scope's start on the same connection, so in systemd before its job and
// before the new task's first instruction), and the new scope is started
// with its own; weights stay once set. A task with a CPU quota keeps its
// weight on its scope: it has the cpu controller anyway.
//
// The allocation's slice is removed (StopUnit) when its last task is
// forgotten; a start that comes while that stop is under way waits for it
// and makes the slice again (the start wins).

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "scope/slice_layout.hpp"
#include "scope/slice_weights.hpp"
#include "scope/systemd_client.hpp"
#include "spec/resources.hpp"

namespace taskscope::manager {

class AllocationSlices {
public:
    using Completion = scope::SystemdClient::Completion;

    /// How long a weight waits, at most, for the starts under way.
    static constexpr std::chrono::milliseconds kFlushDelay{100};
    /// The least time between two weights sent to one slice.
    static constexpr std::chrono::milliseconds kWeightInterval{1000};
    /// The least time between two weights sent to any slices.
    static constexpr std::chrono::milliseconds kNodeWeightInterval{250};

    /// Without a loop, weights wait only for the starts under way (and are
    /// not paced: there is no clock to wait on).
    AllocationSlices(scope::SliceLayout layout, scope::SystemdClient& systemd, common::EventLoop* loop = nullptr,
                     std::chrono::milliseconds weightInterval = kWeightInterval,
                     std::chrono::milliseconds nodeWeightInterval = kNodeWeightInterval);
    ~AllocationSlices();
    AllocationSlices(const AllocationSlices&) = delete;
    AllocationSlices& operator=(const AllocationSlices&) = delete;

    const scope::SliceLayout& layout() const { return layout_; }
    /// The allocation's own slices for `allocId` (pure; InvalidName when
    /// the id does not fit a slice name).
    common::Result<scope::TaskSlices> place(const std::string& allocId, bool reserved) const;
    /// Where task `unit` of `allocId` goes: in the allocation's slice while
    /// it holds fewer than the layout's cap of scopes directly, else in the
    /// first of its overflow slices with room (made as the allocation
    /// grows). The place is held for `unit` from now on (starts under way
    /// count), until it enters or leaves.
    common::Result<scope::TaskSlices> claim(const std::string& unit, const std::string& allocId, bool reserved);

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

    /// Starts a task's scope, making `aux` in the same call, with the
    /// task's CPUWeight when `carryWeight` (and none otherwise); `started`
    /// gets the scope's outcome.
    using ScopeStart = std::function<void(const scope::AuxUnits& aux, bool carryWeight, Completion started)>;
    /// Told when a running task's weight moved to its scope (a second task
    /// of its allocation started): what GetTask shows of it changed.
    using WeightMoved = std::function<void(const std::string& unit)>;
    void onWeightMoved(WeightMoved moved) { weightMoved_ = std::move(moved); }

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
    bool weightOnScope(const std::string& unit) const;
    /// The task is gone (forgotten, or its start failed); its allocation's
    /// slice goes with its last task.
    void leave(const std::string& unit);
    /// A task found at recovery in `slice` (its record's: its allocation's
    /// slice, `allocation`, or one of its overflow slices), whose slices
    /// exist already; `cgroup` is its scope's ("" when its record has none),
    /// which tells where its slices' cgroups are; `onScope`: its scope
    /// carries its weight. Weights are set by reapplyWeights().
    void restore(const std::string& unit, const std::string& slice, const std::string& allocation, const TaskCpu& cpu,
                 bool running, const std::string& cgroup = {}, bool onScope = true);
    /// After recovery, the slices that are to have a weight and whose
    /// cgroup is known (from a restored task's), by slice name: where the
    /// weights they hold can be read.
    std::map<std::string, std::string> weighedSliceCgroups() const;
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
    std::string allocationOf(const std::string& unit) const;
    /// Tasks known in the allocation slice `slice` (0: none).
    size_t membersOf(const std::string& slice) const;
    /// Every allocation slice with a task, or being removed.
    std::set<std::string> allocationSlices() const;
    /// `slice` is one of allocationSlices(), asked of one: the reconciler
    /// asks it of every slice in a pass, and building the set each time
    /// held the manager's loop for minutes on a node of 10,000 allocations.
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
        std::string parent;     ///< the slice it sits in
        uint64_t sum = 0;       ///< running tasks' shares below it
        /// Running tasks' scope weights below it: what an overflow slice
        /// weighs beside its allocation's scopes, in their units.
        uint64_t scopeWeights = 0;
        size_t members = 0;     ///< tasks below it (allocation slices only: they go with the last)
        size_t running = 0;     ///< of those, running (allocation slices only)
        size_t offScope = 0;    ///< of those, running with their weight left to the slice
        std::set<std::string> units;  ///< the tasks below it (allocation slices only)
        size_t direct = 0;      ///< scopes in it, and places claimed in it (allocation and overflow slices)
        bool overflow = false;  ///< an overflow slice: beside scopes, it weighs its tasks' sum unscaled
        bool removing = false;  ///< its StopUnit is under way
        std::vector<std::string> afterRemoval;  ///< units whose entry waits for the stop
        std::vector<Completion> pending;        ///< waiting for its start job, when one is under way
        bool starting = false;
        bool made = false;  ///< known to exist: its start succeeded, or a task was found in it at recovery
        uint64_t applied = 0;  ///< the CPUWeight systemd was last given (0: not known)
        common::EventLoop::Clock::time_point weightSent{};  ///< when it was given (paces the next)
        std::string cgroup;    ///< its cgroup, where recovery learnt it ("" otherwise)
    };
    /// An allocation slice with a task, or being removed.
    static bool held(const Slice& slice);

    struct Deferred {
        scope::TaskSlices slices;
        TaskCpu cpu;
        ScopeStart startScope;
        Completion scopeStarted;
        Completion made;
    };
    void enterNow(const std::string& unit, const scope::TaskSlices& slices, const TaskCpu& cpu,
                  const ScopeStart& startScope, Completion scopeStarted, Completion made);
    /// Starts `unit`'s scope (with its weight if it is to carry it) with
    /// the `carried` slices (marked starting) in its call; when that fails, they are started on their own, and on
    /// UnitExists the scope is asked again without them.
    void startCarrying(const std::string& unit, const std::vector<std::string>& carried, const ScopeStart& startScope,
                       Completion scopeStarted);
    /// Every running task of allocation slice `alloc` whose weight is its
    /// slice's gets it on its scope now (a second task is starting).
    void weightsToScopes(const std::string& alloc);
    /// Counts a member in (or out of) its allocation's running tasks.
    void countRunning(const Member& m, bool in);
    /// Drops `unit`'s claimed place, if it holds one.
    void release(const std::string& unit);
    /// Adds a task (its shares and scope weight) to (or takes it from) the
    /// sums along the chain and sets the weights that changed, except on
    /// `creating` slices (whose start carries them).
    void addToSums(const std::vector<std::string>& chain, const TaskCpu& cpu, bool add,
                   const std::set<std::string>& creating);
    void startSlice(const std::string& slice, Completion done);
    /// The start of a slice already marked starting, on its own.
    void sendStart(const std::string& slice);
    /// A slice known to exist, found active (its weight follows), or
    /// started again with its properties (an operator stopped it).
    void refresh(const std::string& slice, Completion done);
    /// The end of a slice's start (or refresh), for everyone waiting.
    void settle(const std::string& slice, common::Result<void> r);
    /// Its cgroup properties (what a slice that is not transient takes too).
    scope::UnitProperties propertiesOf(const std::string& slice) const;
    /// Those and a description: a start's.
    scope::UnitProperties startPropertiesOf(const std::string& slice) const;
    /// The CPUWeight it is to have (none for share and reserve).
    std::optional<uint64_t> weightOf(const std::string& slice) const;
    /// Its weight is to be `weight`: sent with the next flush, unless
    /// systemd holds it already.
    void setWeight(const std::string& slice, uint64_t weight);
    /// The weights waiting, sent now (or when the starts under way are
    /// answered, or at the latest kFlushDelay from now).
    void flushSoon();
    void flush();
    /// Sends what the lane may send now: the next weight, if none is under
    /// way and a flush is due, and removals up to kRemovalsInFlight.
    void kickLane();
    /// Sends the weight furthest off its sum that its pacing lets go now
    /// (or arms the pace timer for the first that will); false when none went.
    bool sendNextWeight();
    /// A scope start of enter() answered.
    void scopeAnswered();
    void removeAllocation(const std::string& slice);
    /// Its stop is done (or failed): a start that waited makes it again.
    void removed(const std::string& slice, common::Result<void> stopped);
    /// Share and reserve slices sit beside the flat tasks of an older
    /// manager, and never compete for cores with each other: they weigh
    /// the default. Below them, siblings share one scale per parent.
    bool weighed(const std::string& slice) const;

    scope::SliceLayout layout_;
    scope::SystemdClient& systemd_;
    std::map<std::string, Member> members_;                ///< by unit
    std::map<std::string, Slice> slices_;                  ///< by slice name
    std::map<std::string, scope::SiblingWeights> scales_;  ///< by parent slice
    std::map<std::string, Deferred> deferred_;             ///< by unit: entries waiting for a removal
    std::map<std::string, std::string> claims_;            ///< by unit: the slice its place was claimed in
    std::optional<std::set<unsigned>> sharedCpus_;
    WeightMoved weightMoved_;
    common::EventLoop* loop_;
    std::map<std::string, uint64_t> unsent_;  ///< by slice: weights waiting for a flush
    size_t startsUnanswered_ = 0;             ///< scope starts of enter() systemd has not answered
    uint64_t flushTimer_ = 0;
    std::chrono::milliseconds weightInterval_;
    std::chrono::milliseconds nodeWeightInterval_;
    common::EventLoop::Clock::time_point lastWeightSent_{};  ///< any slice's (paces the node)
    uint64_t paceTimer_ = 0;  ///< for the weights that wait for their slice's interval
    common::EventLoop::Clock::time_point paceDue_{};
    // The lane: calls no caller waits for. Weights go one at a time, each
    // sent once systemd has answered the one before. Removals of forgotten
    // allocations' slices go kRemovalsInFlight at a time, a slot given
    // again once its job is done: a drain forgets thousands of
    // allocations, and sent at once their stops kept PID 1 reading its bus
    // without a pause, while the jobs of a new task's start, which systemd
    // runs only when nothing else is pending (SD_EVENT_PRIORITY_IDLE:
    // src/core/manager.c), waited for all of them (12 s for 300 in the test
    // bed); one at a time, a drain of 2,000 one-task allocations in the
    // test bed removed its slices for 48 s after its last scope was
    // collected, against 25 s for systemd alone stopping them 32 at a time
    // (bench/README.md, stop 48).
    static constexpr size_t kRemovalsInFlight = 4;
    bool weightBusy_ = false;
    size_t removalsInFlight_ = 0;
    bool flushDue_ = false;                ///< unsent_ goes through the lane now
    std::deque<std::string> removals_;     ///< allocation slices to stop, in order
    /// Expires with this object: systemd's answers that come after it do nothing.
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
};

}  // namespace taskscope::manager
