#pragma once
// The TaskStats and AllocationStats structs of org.taskscope.Stats1
// (dbus/org.taskscope.Stats1.xml) as sdbus-c++ carries them, and the bits
// of their `measured` mask. Header-only: the streamer writes them,
// taskscopectl reads them.

#include <sdbus-c++/Types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

/// AllocationStats: alloc_id, slices, tasks, then TaskStats's fields from
/// timestamp_us on, in the same order.
using AllocationStats = sdbus::Struct<std::string, std::vector<std::string>,  // alloc_id, slices
                                      uint64_t,                                  // tasks
                                      uint64_t, uint64_t, uint64_t,              // timestamp_us, interval_ms, measured
                                      uint64_t, uint64_t, uint64_t,              // cpu user, system, total (µs)
                                      double, double, double,                    // cpu percent: total, user, system
                                      uint64_t, uint64_t,                        // throttled periods, time (µs)
                                      uint64_t, uint64_t, uint64_t, uint64_t,    // memory rss, cache, swap, usage
                                      uint64_t, uint64_t,                        // memory peak, kernel
                                      uint64_t>;                                 // pids

/// Field indexes in AllocationStats before the fields it shares with TaskStats.
enum AllocationField : size_t { kAllocationId = 0, kSlices, kTasks };
/// Where timestamp_us (the first shared field) is in AllocationStats.
inline constexpr size_t kAllocationTimestampUs = kTasks + 1;

namespace detail {
// Copies the shared fields (timestamp_us to pids), which start at fromStart in From and toStart in To.
template <size_t fromStart, size_t toStart, class From, class To, size_t... I>
void copyShared(const From& from, To& to, std::index_sequence<I...>) {
    ((std::get<I + toStart>(to) = std::get<I + fromStart>(from)), ...);
}
inline constexpr size_t kShared = kPids - kTimestampUs + 1;
}  // namespace detail

/// An allocation's totals in the shape of a task's sample (task ""), so that
/// what shows one shows the other.
inline TaskStats taskShaped(const AllocationStats& a) {
    TaskStats t;
    std::get<kAllocId>(t) = std::get<kAllocationId>(a);
    detail::copyShared<kAllocationTimestampUs, kTimestampUs>(a, t, std::make_index_sequence<detail::kShared>{});
    return t;
}

/// The totals `values` (in a task's shape) of an allocation with its slices and tasks.
inline AllocationStats allocationStats(const TaskStats& values, std::vector<std::string> slices, uint64_t tasks) {
    AllocationStats a;
    std::get<kAllocationId>(a) = std::get<kAllocId>(values);
    std::get<kSlices>(a) = std::move(slices);
    std::get<kTasks>(a) = tasks;
    detail::copyShared<kTimestampUs, kAllocationTimestampUs>(values, a, std::make_index_sequence<detail::kShared>{});
    return a;
}

}  // namespace taskscope::wire
