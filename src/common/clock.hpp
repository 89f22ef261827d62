#pragma once
// The clocks records and events are stamped with, in microseconds, one
// definition each (they were spelled out in six files).

#include <chrono>
#include <cstdint>
#include <ctime>

namespace taskscope::common {

/// Wall-clock time: what records and D-Bus properties carry (StartedAt,
/// FinishedAt), comparable across restarts and with journal timestamps.
inline uint64_t wallClockUs() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
}

/// CLOCK_BOOTTIME: keeps counting across suspend and never steps, for
/// deadlines that must survive a manager restart within one boot.
inline uint64_t bootClockUs() {
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

}  // namespace taskscope::common
