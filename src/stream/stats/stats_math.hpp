#pragma once
// CPU percentages from cumulative CPU counters: the CPU time used since the
// previous sample over the wall time since then (a monotonic clock), in
// percent of ONE core, as Nomad's Percent: a task that keeps two cores busy
// shows about 200. Nothing here reads files or logs.

#include <chrono>
#include <cstdint>
#include <optional>

namespace taskscope::stream::stats {

/// Cumulative CPU time of a cgroup, in µs; unset when not measured.
struct CpuTimes {
    std::optional<uint64_t> totalUs;
    std::optional<uint64_t> userUs;
    std::optional<uint64_t> systemUs;
};

struct CpuPercent {
    std::optional<double> total;
    std::optional<double> user;
    std::optional<double> system;
    /// A counter went backwards (the cgroup was recreated): this sample
    /// is the new baseline and has no percentages.
    bool reset = false;
};

/// CPU time over wall time, in percent of one core; nullopt when the wall
/// time is not positive or the counter went backwards.
std::optional<double> cpuPercent(uint64_t prevUs, uint64_t curUs, std::chrono::nanoseconds wall);

/// Keeps the previous sample of one task. The first sample only sets the
/// baseline; so does a sample in which any counter went backwards.
class CpuPercentTracker {
public:
    using Clock = std::chrono::steady_clock;

    CpuPercent update(const CpuTimes& times, Clock::time_point now);

private:
    struct Baseline {
        CpuTimes times;
        Clock::time_point when;
    };
    std::optional<Baseline> last_;
};

}  // namespace taskscope::stream::stats
