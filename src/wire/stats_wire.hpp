#pragma once
// The TaskStats struct of org.taskscope.Stats1 (dbus/org.taskscope.Stats1.xml)
// as sdbus-c++ carries it, and the bits of its `measured` mask. Header-only:
// the streamer writes it, taskscopectl reads it.

#include <sdbus-c++/Types.h>

#include <cstdint>
#include <string>

namespace taskscope::wire {

using TaskStats = sdbus::Struct<std::string, std::string,                  // alloc_id, task
                                uint64_t, uint64_t, uint64_t,              // timestamp_us, interval_ms, measured
                                uint64_t, uint64_t, uint64_t,              // cpu user, system, total (µs)
                                double, double, double,                    // cpu percent: total, user, system
                                uint64_t, uint64_t,                        // throttled periods, time (µs)
                                uint64_t, uint64_t, uint64_t, uint64_t,    // memory rss, cache, swap, usage
                                uint64_t, uint64_t,                        // memory peak, kernel
                                uint64_t>;                                 // pids

/// Field indexes in TaskStats.
enum Field : size_t {
    kAllocId = 0,
    kTask,
    kTimestampUs,
    kIntervalMs,
    kMeasured,
    kCpuUserUs,
    kCpuSystemUs,
    kCpuTotalUs,
    kCpuPercent,
    kCpuUserPercent,
    kCpuSystemPercent,
    kCpuThrottledPeriods,
    kCpuThrottledTimeUs,
    kMemoryRss,
    kMemoryCache,
    kMemorySwap,
    kMemoryUsage,
    kMemoryPeak,
    kMemoryKernel,
    kPids,
};

/// The `measured` bit of a value field: bit N is the Nth value after `measured`.
constexpr uint64_t bit(Field f) { return uint64_t{1} << (f - kCpuUserUs); }

/// Not a value: the CPU counters went backwards; the percentages restart.
constexpr uint64_t kCountersReset = uint64_t{1} << 32;

}  // namespace taskscope::wire
