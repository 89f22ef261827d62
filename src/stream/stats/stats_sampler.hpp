#pragma once
// The streamer's stats domain: the running tasks and their cgroups, each
// sampled on its own schedule (StatsSchedule) by one timer on the event
// loop, their latest samples, and the per-task intervals, which survive a
// restart of the streamer (a task configured for 10 s must not fall back
// to the default, the bug of seed 001). The D-Bus adaptor only converts.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "scope/cgroup_path.hpp"
#include "scope/cgroup_stats.hpp"
#include "stream/stats/stats_math.hpp"
#include "stream/stats/stats_schedule.hpp"
#include "stream/stats/task_key.hpp"

namespace taskscope::stream::stats {

inline constexpr uint64_t kMinStatsIntervalMs = 100;
inline constexpr uint64_t kMaxStatsIntervalMs = 24ull * 3600 * 1000;

/// One sample of one task.
struct TaskSample {
    TaskKey key;
    uint64_t timestampUs = 0;  ///< wall clock, µs since the epoch
    uint64_t intervalMs = 0;   ///< the task's interval when it was taken
    scope::CgroupStats stats;
    CpuPercent cpu;
};

/// What the bus side publishes.
class StatsEvents {
public:
    virtual ~StatsEvents() = default;
    /// The samples of one tick, all tasks due at that instant.
    virtual void samplesTaken(const std::vector<TaskSample>& samples) = 0;
    /// The set of tasks changed (at most once per turn of the event loop).
    virtual void tasksChanged() = 0;
    virtual void defaultIntervalChanged() = 0;
};

struct StatsOptions {
    uint64_t defaultIntervalMs = 1000;
    /// Where per-task intervals are kept across restarts; "" keeps them
    /// in memory only.
    std::string intervalsFile;
    /// The intervals an earlier run kept (loadStatsIntervals). They wait
    /// for their tasks until retainOnly() says which still run.
    std::map<TaskKey, uint64_t> intervals;
    /// defaultIntervalMs was set over the bus (by an earlier run, or kept
    /// in intervalsFile): it is saved with the per-task intervals.
    bool defaultSetByCaller = false;
};

/// What intervalsFile keeps: the per-task intervals and, once a caller set
/// it, the default interval.
struct KeptIntervals {
    std::map<TaskKey, uint64_t> tasks;
    std::optional<uint64_t> defaultMs;
};

/// 0 (off) or kMinStatsIntervalMs..kMaxStatsIntervalMs; InvalidArgument.
common::Result<void> checkStatsInterval(uint64_t intervalMs, const std::string& what = "interval");

/// The intervals kept in `file`; none when it does not exist.
common::Result<KeptIntervals> loadStatsIntervals(const std::string& file);

/// Options that keep their intervals in `file` and start with what an
/// earlier run kept there: the per-task intervals, and a default a caller
/// set, which wins over the option's.
StatsOptions keptIn(StatsOptions options, std::string file, KeptIntervals kept);

class StatsSampler {
public:
    using Clock = std::chrono::steady_clock;

    StatsSampler(common::EventLoop& loop, scope::CgroupStatsReader reader, StatsOptions options);
    ~StatsSampler();
    StatsSampler(const StatsSampler&) = delete;
    StatsSampler& operator=(const StatsSampler&) = delete;

    void attach(StatsEvents& events) { events_ = &events; }

    /// A running task and its cgroup (systemd's ControlGroup). Its first
    /// sample is due at once. A task already known keeps its samples and
    /// baseline, unless its cgroup changed.
    void addTask(const TaskKey& key, const scope::CgroupPath& cgroup);
    void removeTask(const TaskKey& key);
    /// Drops every task, and every kept interval, not in `running`.
    void retainOnly(const std::set<TaskKey>& running);
    bool knows(const TaskKey& key) const { return tasks_.contains(key); }

    /// -1: follow the default; 0: stop sampling; else kMin..kMaxStatsIntervalMs.
    /// NoSuchTask, InvalidArgument.
    common::Result<void> setTaskInterval(const TaskKey& key, int64_t intervalMs);
    /// 0 (no task without its own interval is sampled) or kMin..kMax.
    /// Kept in intervalsFile, so that it survives a restart.
    common::Result<void> setDefaultInterval(uint64_t intervalMs);
    uint64_t defaultIntervalMs() const;
    /// The interval the task is sampled at (0: not sampled). NoSuchTask.
    common::Result<uint64_t> taskInterval(const TaskKey& key) const;

    /// The task's latest sample. NoSuchTask, NoSample.
    common::Result<TaskSample> latest(const TaskKey& key) const;
    /// The latest sample of every task that has one, ordered by task.
    std::vector<TaskSample> latestAll() const;

    uint32_t taskCount() const { return static_cast<uint32_t>(tasks_.size()); }
    scope::CgroupVersion cgroupVersion() const { return reader_.version(); }

    /// Samples every task due at `now` and returns the samples. The timer
    /// calls it with the clock's time; tests call it with their own.
    std::vector<TaskSample> sampleDue(Clock::time_point now);

private:
    struct Task {
        explicit Task(scope::CgroupPath path) : cgroup(std::move(path)) {}
        scope::CgroupPath cgroup;
        std::optional<scope::CgroupFiles> files;  ///< open between samples; reset when the cgroup went away
        CpuPercentTracker cpu;
        std::optional<TaskSample> latest;
        bool unreadable = false;  ///< the last attempt failed (logged once per change)
    };

    std::optional<TaskSample> sampleOne(const TaskKey& key, Task& t, Clock::time_point now, uint64_t timestampUs);
    void noteUnreadable(const TaskKey& key, Task& t, const common::Error& error);
    void saveIntervals();
    void notifyTasksChanged();
    void arm();
    void onTimer();

    common::EventLoop& loop_;
    scope::CgroupStatsReader reader_;
    StatsOptions options_;
    StatsSchedule schedule_;
    StatsEvents* events_ = nullptr;
    std::map<TaskKey, Task> tasks_;
    std::map<TaskKey, uint64_t> intervals_;  ///< per-task intervals set by callers (0 = off), persisted
    bool defaultSetByCaller_ = false;        ///< the default is persisted too
    uint64_t timer_ = 0;
    uint64_t changeTimer_ = 0;  ///< a tasksChanged() is due at the loop's next turn
    std::optional<Clock::time_point> armedFor_;
};

}  // namespace taskscope::stream::stats
