// The periodic pass over nomad.slice's scopes that stops those no task
// owns (scope_reconciler.hpp).
#include "manager/tasks/scope_reconciler.hpp"

#include <signal.h>

#include <algorithm>

#include "common/clock.hpp"
#include "common/error_names.hpp"
#include "scope/slice_layout.hpp"

namespace taskscope::manager {

namespace {

constexpr std::string_view kScopeSuffix = ".scope";

}  // namespace

bool isTaskScopeName(const std::string& unit) {
    if (unit.size() <= kScopeSuffix.size() ||
        unit.compare(unit.size() - kScopeSuffix.size(), kScopeSuffix.size(), kScopeSuffix) != 0)
        return false;
    const auto stem = std::string_view(unit).substr(0, unit.size() - kScopeSuffix.size());
    const auto dash = stem.find('-');
    return dash != std::string_view::npos && dash > 0 && dash + 1 < stem.size();
}

std::chrono::milliseconds firstPassDelay(const ReconcilerConfig& config) {
    return std::max(config.period, config.creationGrace);
}

ScopeReconciler::ScopeReconciler(ReconcilerConfig config, scope::SystemdClient& systemd, std::string slice,
                                 OwnsUnit owns, NowUs now)
    : config_(config),
      systemd_(systemd),
      slice_(std::move(slice)),
      owns_(std::move(owns)),
      now_(now ? std::move(now) : NowUs(common::wallClockUs)) {}

void ScopeReconciler::watchSlices(scope::SliceLayout layout, OwnsUnit ownsSlice) {
    layout_ = std::move(layout);
    ownsSlice_ = std::move(ownsSlice);
}

bool ScopeReconciler::taskSlice(const std::string& slice) const {
    if (slice == slice_) return true;
    return layout_ && scope::parseAllocationSlice(*layout_, slice).has_value();
}

struct ScopeReconciler::Pass {
    std::vector<std::string> units;
    size_t at = 0;
    ReconcileOutcome outcome;
    PassDone done;
};

void ScopeReconciler::runPass(PassDone done) {
    systemd_.listUnitsAsync("*.scope", [this, done = std::move(done), alive = std::weak_ptr<int>(lifetime_)](
                                           common::Result<std::vector<std::string>> units) mutable {
        if (alive.expired()) return;
        if (!units) return done(units.error().context("list scopes"));
        auto pass = std::make_shared<Pass>();
        pass->units = std::move(*units);
        pass->outcome.dryRun = config_.dryRun;
        pass->done = std::move(done);
        if (!layout_) return next(pass);
        // The allocation slices after the scopes: a dangling scope in a
        // dangling slice is counted as itself first.
        systemd_.listUnitsAsync("*.slice", [this, pass, alive](common::Result<std::vector<std::string>> slices) {
            if (alive.expired()) return;
            if (!slices) {
                auto done = std::move(pass->done);
                return done(slices.error().context("list slices"));
            }
            for (auto& s : *slices)
                if (scope::parseAllocationSlice(*layout_, s)) pass->units.push_back(std::move(s));
            next(pass);
        });
    });
}

void ScopeReconciler::next(const std::shared_ptr<Pass>& pass) {
    const uint64_t graceUs = static_cast<uint64_t>(config_.creationGrace.count()) * 1000u;
    while (pass->at < pass->units.size()) {
        const auto unit = pass->units[pass->at++];
        const bool slice = unit.ends_with(".slice");
        const auto owned = [this, slice, unit] { return slice ? ownsSlice_ && ownsSlice_(unit) : owns_(unit); };
        if (slice ? !layout_ || !scope::parseAllocationSlice(*layout_, unit) : !isTaskScopeName(unit)) continue;
        if (owned()) continue;
        systemd_.unitInfoAsync(unit, [this, pass, unit, slice, owned, graceUs, alive = std::weak_ptr<int>(lifetime_)](
                                         common::Result<scope::UnitInfo> info) {
            if (alive.expired()) return;
            // Gone meanwhile, or not readable: nothing to judge it by this time.
            if (!info || info->state.active != "active") return next(pass);
            // A scope in the configured slice or an allocation's; an
            // allocation slice in its bucket or the reserve slice (its name
            // says which).
            if (!slice && !taskSlice(info->slice)) return next(pass);
            // A unit that never became active has no age: it is not old enough.
            if (info->activeEnterUs == 0 || info->activeEnterUs + graceUs > now_()) return next(pass);
            // Asked again right before acting: a start may have claimed the
            // unit while this pass talked to systemd.
            if (owned()) return next(pass);
            const auto since = info->activeEnterUs;
            if (config_.dryRun) {
                pass->outcome.stopped.push_back({unit, since});
                return next(pass);
            }
            act(pass, unit, since);
        });
        return;
    }
    auto done = std::move(pass->done);
    done(std::move(pass->outcome));
}

void ScopeReconciler::act(const std::shared_ptr<Pass>& pass, const std::string& unit, uint64_t since) {
    auto acted = [this, pass, unit, since, alive = std::weak_ptr<int>(lifetime_)](common::Result<void> k) {
        if (alive.expired()) return;
        if (k)
            pass->outcome.stopped.push_back({unit, since});
        else if (k.error().name != common::errors::kNoSuchUnit)
            pass->outcome.failed.push_back({unit, k.error()});
        next(pass);
    };
    // A slice is stopped (it holds no process of its own; whatever scopes
    // are left in it go with it); a scope's processes are killed.
    if (unit.ends_with(".slice")) return systemd_.stopUnitAsync(unit, acted);
    systemd_.killUnitAsync(unit, "all", SIGKILL, acted);
}

void ScopeReconciler::start(common::EventLoop& loop, Report report, std::function<void(const common::Error&)> onError) {
    if (!config_.enabled) return;
    loop_ = &loop;
    report_ = std::move(report);
    onError_ = std::move(onError);
    schedule(firstPassDelay(config_));
}

void ScopeReconciler::stop() {
    if (loop_ && timer_) loop_->cancelTimer(timer_);
    timer_ = 0;
    loop_ = nullptr;  // a pass under way schedules no next one
}

void ScopeReconciler::schedule(std::chrono::milliseconds delay) {
    timer_ = loop_->addTimer(common::EventLoop::Clock::now() + delay, [this] {
        timer_ = 0;
        runPass([this](common::Result<ReconcileOutcome> outcome) {
            if (!outcome) {
                if (onError_) onError_(outcome.error());
            } else if (report_ && (!outcome->stopped.empty() || !outcome->failed.empty())) {
                report_(*outcome);
            }
            // The next pass a period after this one ended.
            if (loop_) schedule(config_.period);
        });
    });
}

}  // namespace taskscope::manager
