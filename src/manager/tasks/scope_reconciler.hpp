#pragma once
// Stops task scopes that no task owns: left by an older manager, by a
// crash between StartTransientUnit and the task's record, or created by
// hand under the slice. Built like Nomad's dangling-container reconciler
// (drivers/docker/reconcile_dangling.go): a periodic pass, a creation
// grace measured from the unit's own activation, a first pass only after
// max(period, grace) so that recovery has re-adopted every task, and a
// dry-run mode that only reports.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "manager/tasks/config.hpp"
#include "scope/slice_layout.hpp"
#include "scope/systemd_client.hpp"

namespace taskscope::manager {

/// What one pass found and did; the daemon's edge logs and signals it.
struct ReconcileOutcome {
    struct Stopped {
        std::string unit;
        uint64_t activeSinceUs = 0;  ///< the unit's ActiveEnterTimestamp
    };
    struct Failed {
        std::string unit;
        common::Error error;
    };
    std::vector<Stopped> stopped;  ///< killed, or only found in dry-run mode
    std::vector<Failed> failed;    ///< found, but systemd refused the kill
    bool dryRun = false;
};

/// "<alloc>-<task>.scope" as taskscope names task scopes: a scope whose
/// name has a dash with something on either side.
bool isTaskScopeName(const std::string& unit);

/// When the first pass runs after the manager starts: max(period, grace),
/// the time recovery has to re-adopt what an earlier manager started.
std::chrono::milliseconds firstPassDelay(const ReconcilerConfig& config);

class ScopeReconciler {
public:
    /// True for a unit the manager tracks or is starting right now.
    using OwnsUnit = std::function<bool(const std::string& unit)>;
    using NowUs = std::function<uint64_t()>;  ///< CLOCK_REALTIME, as systemd's timestamps
    using Report = std::function<void(const ReconcileOutcome&)>;

    ScopeReconciler(ReconcilerConfig config, scope::SystemdClient& systemd, std::string slice, OwnsUnit owns,
                    NowUs now = {});
    ~ScopeReconciler() { stop(); }
    /// Also the nested layout (issue 31): task scopes in any allocation
    /// slice of `layout` (below the same slice) are judged as those directly
    /// in it, and an allocation slice that no task owns (`ownsSlice` false)
    /// is stopped (StopUnit: with whatever is left in it), after the same
    /// grace.
    void watchSlices(scope::SliceLayout layout, OwnsUnit ownsSlice);
    ScopeReconciler(const ScopeReconciler&) = delete;
    ScopeReconciler& operator=(const ScopeReconciler&) = delete;

    using PassDone = std::function<void(common::Result<ReconcileOutcome>)>;
    /// One pass: every running scope under the slice that is named like a
    /// task's, that no task owns and that has been active longer than the
    /// grace is killed (SIGKILL to all its processes: nobody waits for it
    /// to end gracefully), or only reported in dry-run mode. Ownership is
    /// asked again just before each kill, so a start that began during
    /// the pass keeps its scope. Every question to systemd is asked
    /// asynchronously, one unit after another; `done` hears the outcome.
    /// Errors: the listing failed.
    void runPass(PassDone done);

    /// Runs passes on `loop`, the first after firstPassDelay(), then every
    /// period; `report` hears each pass that found something. A pass whose
    /// listing failed is reported through `onError`.
    void start(common::EventLoop& loop, Report report, std::function<void(const common::Error&)> onError);
    void stop();

    const ReconcilerConfig& config() const { return config_; }

private:
    struct Pass;
    void schedule(std::chrono::milliseconds delay);
    /// Judges the pass's next unit, or ends it.
    void next(const std::shared_ptr<Pass>& pass);
    /// The scope's slice is the configured one or an allocation's of it.
    bool taskSlice(const std::string& slice) const;
    /// Kills a dangling scope or stops a dangling allocation slice.
    void act(const std::shared_ptr<Pass>& pass, const std::string& unit, uint64_t since);

    ReconcilerConfig config_;
    scope::SystemdClient& systemd_;
    std::string slice_;
    OwnsUnit owns_;
    std::optional<scope::SliceLayout> layout_;  ///< set: the nested layout's slices are watched too
    OwnsUnit ownsSlice_;
    NowUs now_;
    common::EventLoop* loop_ = nullptr;
    uint64_t timer_ = 0;
    Report report_;
    std::function<void(const common::Error&)> onError_;
    /// Expires with the reconciler: systemd's answers to a pass after it do nothing.
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
};

}  // namespace taskscope::manager
