#pragma once
// Where an operation spends its time, in two kinds: time on the event loop
// (each synchronous step, which every other caller waits behind) and time
// waiting between steps (for a process, systemd, the disk), which costs the
// loop nothing. A start logs its profile at debug level once it ends; it is
// how the loop's share of a start was found and is watched (issue 12).

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace taskscope::common {

class StepClock {
public:
    using Clock = std::chrono::steady_clock;

    StepClock() : begun_(Clock::now()), last_(begun_) {}

    /// A synchronous step on the loop ended: the time since the last mark.
    void onLoop(const char* step) { add(step, true); }
    /// A wait ended (a report, a reply, a write): the time since the last mark.
    void waited(const char* step) { add(step, false); }

    /// Total time on the loop so far, in microseconds.
    long long loopUs() const { return loopUs_; }

    /// "loop 1.2 ms (parse 0.1, spawn 0.9, ...); waited 80.1 ms (pid 3.0, systemd 70.0, ...); total 81.3 ms"
    std::string summary() const {
        std::string loop, wait;
        long long waitUs = 0;
        for (const auto& s : steps_) {
            auto& out = s.onLoop ? loop : wait;
            if (!s.onLoop) waitUs += s.us;
            char buf[96];
            std::snprintf(buf, sizeof buf, "%s%s %.2f", out.empty() ? "" : ", ", s.name, static_cast<double>(s.us) / 1000.0);
            out += buf;
        }
        const auto total = std::chrono::duration_cast<std::chrono::microseconds>(last_ - begun_).count();
        char head[160];
        std::snprintf(head, sizeof head, "loop %.2f ms (", static_cast<double>(loopUs_) / 1000.0);
        std::string out = head + loop;
        std::snprintf(head, sizeof head, "); waited %.2f ms (", static_cast<double>(waitUs) / 1000.0);
        out += head + wait;
        std::snprintf(head, sizeof head, "); total %.2f ms", static_cast<double>(total) / 1000.0);
        return out + head;
    }

private:
    struct Step {
        const char* name;
        long long us;
        bool onLoop;
    };
    void add(const char* name, bool onLoop) {
        const auto now = Clock::now();
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now - last_).count();
        last_ = now;
        steps_.push_back({name, us, onLoop});
        if (onLoop) loopUs_ += us;
    }

    Clock::time_point begun_, last_;
    std::vector<Step> steps_;
    long long loopUs_ = 0;
};

}  // namespace taskscope::common
