#pragma once
// When each task is sampled: every task has its own interval (its own, or
// the default), and its samples fall on the multiples of that interval of
// the monotonic clock. Tasks with the same interval thus share ticks, and
// a 3 s task shares every third tick of the 1 s tasks, so one timer armed
// for the earliest due time and one batch per tick serve them all. A task
// due while the daemon was busy is sampled once, late, never in a burst.
// Pure bookkeeping: no clock is read here and nothing logs.

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "stream/stats/task_key.hpp"

namespace taskscope::stream::stats {

class StatsSchedule {
public:
    using Clock = std::chrono::steady_clock;
    using TimePoint = Clock::time_point;
    using Ms = std::chrono::milliseconds;

    /// Ms(0) as the default samples no task that lacks an interval of its own.
    explicit StatsSchedule(Ms defaultInterval) : default_(defaultInterval) {}

    /// A new task; its first sample is due at once (unless its interval is 0).
    /// A task already there keeps its schedule.
    void add(const TaskKey& key, TimePoint now, std::optional<Ms> own = std::nullopt);
    void remove(const TaskKey& key);
    bool contains(const TaskKey& key) const { return entries_.contains(key); }
    size_t size() const { return entries_.size(); }

    /// The task's own interval: nullopt follows the default, Ms(0) stops
    /// sampling it. Takes effect at once: the next sample is due one new
    /// interval after the last one (now, if that has passed already).
    void setInterval(const TaskKey& key, std::optional<Ms> own, TimePoint now);
    void setDefault(Ms interval, TimePoint now);

    Ms defaultInterval() const { return default_; }
    /// The interval the task is sampled at now (Ms(0): not sampled).
    Ms interval(const TaskKey& key) const;
    std::optional<Ms> ownInterval(const TaskKey& key) const;

    /// When the earliest sample is due; nullopt when none is.
    std::optional<TimePoint> nextDue() const;
    std::optional<TimePoint> due(const TaskKey& key) const;

    /// The tasks due at `now`, by due time, then task; each is then due
    /// again at the first multiple of its interval after `now`.
    std::vector<TaskKey> takeDue(TimePoint now);

private:
    struct Entry {
        std::optional<Ms> own;
        std::optional<TimePoint> due;
        std::optional<TimePoint> last;
    };

    Ms effective(const Entry& e) const { return e.own.value_or(default_); }
    void setDue(const TaskKey& key, Entry& e, std::optional<TimePoint> due);
    void reschedule(const TaskKey& key, Entry& e, TimePoint now);

    Ms default_;
    std::map<TaskKey, Entry> entries_;
    std::set<std::pair<TimePoint, TaskKey>> queue_;  // (due, task) of every task that is sampled
};

}  // namespace taskscope::stream::stats
