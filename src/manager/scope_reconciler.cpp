#include "manager/scope_reconciler.hpp"

#include <signal.h>

#include <algorithm>

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

common::Result<ReconcileOutcome> ScopeReconciler::runPass() {
    ReconcileOutcome out;
    out.dryRun = config_.dryRun;
    auto units = systemd_.listUnits("*.scope");
    if (!units) return units.error().context("list scopes");
    const uint64_t graceUs = static_cast<uint64_t>(config_.creationGrace.count()) * 1000u;
    for (const auto& unit : *units) {
        if (!isTaskScopeName(unit) || owns_(unit)) continue;
        auto info = systemd_.unitInfo(unit);
        // Gone meanwhile, or not readable: nothing to judge it by this time.
        if (!info) continue;
        if (info->slice != slice_ || info->state.active != "active") continue;
        // A unit that never became active has no age: it is not old enough.
        const uint64_t now = now_();
        if (info->activeEnterUs == 0 || info->activeEnterUs + graceUs > now) continue;
        // Asked again right before acting: a start may have claimed the
        // unit while this pass talked to systemd.
        if (owns_(unit)) continue;
        if (!config_.dryRun) {
            if (auto k = systemd_.killUnit(unit, "all", SIGKILL); !k) {
                if (k.error().name != "NoSuchUnit") out.failed.push_back({unit, k.error()});
                continue;
            }
        }
        out.stopped.push_back({unit, info->activeEnterUs});
    }
    return out;
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
}

void ScopeReconciler::schedule(std::chrono::milliseconds delay) {
    timer_ = loop_->addTimer(common::EventLoop::Clock::now() + delay, [this] {
        timer_ = 0;
        auto outcome = runPass();
        if (!outcome) {
            if (onError_) onError_(outcome.error());
        } else if (report_ && (!outcome->stopped.empty() || !outcome->failed.empty())) {
            report_(*outcome);
        }
        schedule(config_.period);
    });
}

}  // namespace taskscope::manager
