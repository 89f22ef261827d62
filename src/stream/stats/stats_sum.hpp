#pragma once
// An allocation's totals from the samples of its parts (an allocation
// slice, or a task that sits in no allocation slice): each value is the sum
// of the parts' values, and is known only when every part knows it, so a
// total never silently leaves a part out. memory_peak is not additive (the
// parts peaked at different times), so a sum of more than one part has
// none. Pure: nothing here reads files or logs.

#include <cstddef>

#include "scope/cgroup_stats.hpp"
#include "stream/stats/stats_math.hpp"

namespace taskscope::stream::stats {

class StatsSum {
public:
    /// Adds one part's sample.
    void add(const scope::CgroupStats& stats, const CpuPercent& cpu);
    /// Adds a part that has no sample (yet): every total becomes unknown.
    void addMissing();

    const scope::CgroupStats& stats() const { return stats_; }
    const CpuPercent& cpu() const { return cpu_; }
    size_t parts() const { return parts_; }

private:
    scope::CgroupStats stats_;
    CpuPercent cpu_;
    size_t parts_ = 0;
};

}  // namespace taskscope::stream::stats
