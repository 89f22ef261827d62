#include "manager/scope_reconciler.hpp"

#include <signal.h>

#include <algorithm>

#include "common/error_names.hpp"

namespace taskscope::manager {

namespace {

constexpr std::string_view kScopeSuffix = ".scope";

uint64_t realtimeUs() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
}

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
      now_(now ? std::move(now) : NowUs(realtimeUs)) {}

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
        next(pass);
    });
}

void ScopeReconciler::next(const std::shared_ptr<Pass>& pass) {
    const uint64_t graceUs = static_cast<uint64_t>(config_.creationGrace.count()) * 1000u;
    while (pass->at < pass->units.size()) {
        const auto unit = pass->units[pass->at++];
        if (!isTaskScopeName(unit) || owns_(unit)) continue;
        systemd_.unitInfoAsync(unit, [this, pass, unit, graceUs, alive = std::weak_ptr<int>(lifetime_)](
                                         common::Result<scope::UnitInfo> info) {
            if (alive.expired()) return;
            // Gone meanwhile, or not readable: nothing to judge it by this time.
            if (!info || info->slice != slice_ || info->state.active != "active") return next(pass);
            // A unit that never became active has no age: it is not old enough.
            if (info->activeEnterUs == 0 || info->activeEnterUs + graceUs > now_()) return next(pass);
            // Asked again right before acting: a start may have claimed the
            // unit while this pass talked to systemd.
            if (owns_(unit)) return next(pass);
            const auto since = info->activeEnterUs;
            if (config_.dryRun) {
                pass->outcome.stopped.push_back({unit, since});
                return next(pass);
            }
            systemd_.killUnitAsync(unit, "all", SIGKILL,
                                   [this, pass, unit, since, alive](common::Result<void> k) {
                                       if (alive.expired()) return;
                                       if (k)
                                           pass->outcome.stopped.push_back({unit, since});
                                       else if (k.error().name != common::errors::kNoSuchUnit)
                                           pass->outcome.failed.push_back({unit, k.error()});
                                       next(pass);
                                   });
        });
        return;
    }
    auto done = std::move(pass->done);
    done(std::move(pass->outcome));
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
