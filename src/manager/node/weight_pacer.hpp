#pragma once
// The CPU weights of the allocations' slices on their way to systemd, and
// the removals of forgotten allocations' slices that share their lane.
// SliceLedger (slice_ledger.hpp) decides what a slice weighs; this sends
// it, when and how often the node can take it, and remembers what systemd
// holds so that a weight it has already is not sent again.
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

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "manager/node/not_done.hpp"
#include "scope/systemd_client.hpp"

namespace taskscope::manager {

class WeightPacer {
public:
    /// How long a weight waits, at most, for the starts under way.
    static constexpr std::chrono::milliseconds kFlushDelay{100};
    /// The least time between two weights sent to one slice.
    static constexpr std::chrono::milliseconds kWeightInterval{1000};
    /// The least time between two weights sent to any slices.
    static constexpr std::chrono::milliseconds kNodeWeightInterval{250};

    /// Told when a slice's removal is answered (its stop done, or failed).
    using Removed = std::function<void(const std::string& slice, common::Result<void> stopped)>;

    /// Without a loop, weights wait only for the starts under way (and are
    /// not paced: there is no clock to wait on).
    WeightPacer(scope::SystemdClient& systemd, common::EventLoop* loop, std::chrono::milliseconds weightInterval,
                std::chrono::milliseconds nodeWeightInterval);
    ~WeightPacer();
    WeightPacer(const WeightPacer&) = delete;
    WeightPacer& operator=(const WeightPacer&) = delete;

    void onRemoved(Removed removed) { removed_ = std::move(removed); }
    /// Who hears of a weight systemd refused (nothing here logs).
    void setNotDone(NotDone notDone) { notDone_ = std::move(notDone); }

    /// `slice`'s weight is to be `weight`: sent with the next flush, unless
    /// systemd holds it already.
    void setWeight(const std::string& slice, uint64_t weight);
    /// A task's scope start is sent: the weights wait until it is answered.
    void scopeStarting() { ++startsUnanswered_; }
    /// A scope start of scopeStarting() answered.
    void scopeAnswered();

    /// A start of `slice` carries `weight` (0: none): systemd holds it once
    /// made, and nothing waits to be sent.
    void carried(const std::string& slice, uint64_t weight);
    /// What `slice` holds is not known (its start failed, it was stopped).
    void unknown(const std::string& slice);
    /// After recovery: `slice` holds `weight` (read from its cgroup), where
    /// nothing else is known of it.
    void held(const std::string& slice, uint64_t weight);
    /// The weights systemd is known to hold, by slice (none 0).
    std::map<std::string, uint64_t> heldWeights() const;
    /// `slice` is no more, for the ledger: what is known of it goes.
    void forget(const std::string& slice);

    /// Queues the stop of allocation slice `family.front()`; no weight is
    /// sent any more to it or to the slices in it (the rest of `family`).
    /// Stops go a few at a time: see kRemovalsInFlight.
    void remove(const std::vector<std::string>& family);
    /// Takes `slice`'s stop back out of the queue, if it was not sent yet.
    bool cancelRemoval(const std::string& slice);

private:
    struct Held {
        uint64_t applied = 0;                               ///< the CPUWeight systemd was last given (0: not known)
        common::EventLoop::Clock::time_point weightSent{};  ///< when it was given (paces the next)
    };

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

    scope::SystemdClient& systemd_;
    common::EventLoop* loop_;
    std::chrono::milliseconds weightInterval_;
    std::chrono::milliseconds nodeWeightInterval_;
    Removed removed_;
    std::map<std::string, Held> held_;        ///< by slice
    std::map<std::string, uint64_t> unsent_;  ///< by slice: weights waiting for a flush
    size_t startsUnanswered_ = 0;             ///< scope starts systemd has not answered
    uint64_t flushTimer_ = 0;
    common::EventLoop::Clock::time_point lastWeightSent_{};  ///< any slice's (paces the node)
    uint64_t paceTimer_ = 0;                                 ///< for the weights that wait for their slice's interval
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
    bool flushDue_ = false;             ///< unsent_ goes through the lane now
    std::deque<std::string> removals_;  ///< allocation slices to stop, in order
    /// Expires with this object: systemd's answers that come after it do nothing.
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
    NotDone notDone_;
};

}  // namespace taskscope::manager
