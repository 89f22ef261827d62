#include "stream/stats/stats_math.hpp"

namespace taskscope::stream::stats {

namespace {

bool wentBack(const std::optional<uint64_t>& prev, const std::optional<uint64_t>& cur) {
    return prev && cur && *cur < *prev;
}

std::optional<double> percentOf(const std::optional<uint64_t>& prev, const std::optional<uint64_t>& cur,
                                std::chrono::nanoseconds wall) {
    if (!prev || !cur) return std::nullopt;
    return cpuPercent(*prev, *cur, wall);
}

}  // namespace

std::optional<double> cpuPercent(uint64_t prevUs, uint64_t curUs, std::chrono::nanoseconds wall) {
    if (wall.count() <= 0 || curUs < prevUs) return std::nullopt;
    const double usedNs = static_cast<double>(curUs - prevUs) * 1000.0;
    return usedNs / static_cast<double>(wall.count()) * 100.0;
}

CpuPercent CpuPercentTracker::update(const CpuTimes& times, Clock::time_point now) {
    CpuPercent out;
    if (!last_) {
        last_ = Baseline{times, now};
        return out;
    }
    const auto& prev = last_->times;
    if (wentBack(prev.totalUs, times.totalUs) || wentBack(prev.userUs, times.userUs) ||
        wentBack(prev.systemUs, times.systemUs)) {
        out.reset = true;
        last_ = Baseline{times, now};
        return out;
    }
    const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_->when);
    // Two samples at the same instant say nothing; keep the older baseline.
    if (wall.count() <= 0) return out;
    out.total = percentOf(prev.totalUs, times.totalUs, wall);
    out.user = percentOf(prev.userUs, times.userUs, wall);
    out.system = percentOf(prev.systemUs, times.systemUs, wall);
    last_ = Baseline{times, now};
    return out;
}

}  // namespace taskscope::stream::stats
