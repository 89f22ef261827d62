#include "stream/stats/stats_sum.hpp"

namespace taskscope::stream::stats {

namespace {

template <class T>
void sumInto(std::optional<T>& total, const std::optional<T>& part, bool first) {
    if (first)
        total = part;
    else if (total && part)
        *total += *part;
    else
        total.reset();
}

}  // namespace

void StatsSum::add(const scope::CgroupStats& s, const CpuPercent& cpu) {
    const bool first = parts_++ == 0;
    auto& t = stats_;
    sumInto(t.cpuUserUs, s.cpuUserUs, first);
    sumInto(t.cpuSystemUs, s.cpuSystemUs, first);
    sumInto(t.cpuTotalUs, s.cpuTotalUs, first);
    sumInto(t.cpuThrottledPeriods, s.cpuThrottledPeriods, first);
    sumInto(t.cpuThrottledTimeUs, s.cpuThrottledTimeUs, first);
    sumInto(t.memoryRss, s.memoryRss, first);
    sumInto(t.memoryCache, s.memoryCache, first);
    sumInto(t.memorySwap, s.memorySwap, first);
    sumInto(t.memoryUsage, s.memoryUsage, first);
    sumInto(t.memoryKernel, s.memoryKernel, first);
    sumInto(t.pids, s.pids, first);
    if (first)
        t.memoryPeak = s.memoryPeak;
    else
        t.memoryPeak.reset();
    sumInto(cpu_.total, cpu.total, first);
    sumInto(cpu_.user, cpu.user, first);
    sumInto(cpu_.system, cpu.system, first);
    cpu_.reset = cpu_.reset || cpu.reset;
}

void StatsSum::addMissing() {
    ++parts_;
    stats_ = {};
    const bool reset = cpu_.reset;
    cpu_ = {};
    cpu_.reset = reset;
}

}  // namespace taskscope::stream::stats
