#pragma once
// The streamer's stats domain: the running tasks and their cgroups, each
// sampled on its own schedule (StatsSchedule) by one timer on the event
// loop, their latest samples, and the per-task intervals, which survive a
// restart of the streamer (a task configured for 10 s must not fall back
// to the default, the bug of seed 001). The D-Bus adaptor only converts.
//
// Allocations: a task's allocation slice (the manager's alloc_slice) is a
// cgroup whose counters are the hierarchical totals of every task below it
// (overflow slices, and the CPU time of tasks that already exited, too), so
// an allocation is sampled with one read of that slice's cgroup, on the
// default interval's ticks, while it has a running task. A task in no
// allocation slice (a flat one) adds its own latest sample to its
// allocation's totals (StatsSum).

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

/// The totals of one allocation's running tasks.
struct AllocationSample {
    std::string allocId;
    /// Its allocation slices, sorted: one; two when it has tasks on
    /// reserved and on shared cores; none when every task is flat.
    std::vector<std::string> slices;
    uint64_t tasks = 0;        ///< its running tasks
    uint64_t timestampUs = 0;  ///< the oldest of the samples summed
    uint64_t intervalMs = 0;   ///< the longest interval of the samples summed
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
    /// baseline (and allocation slice), unless its cgroup changed. A new
    /// task below a slice of its allocation known already is in it at once.
    void addTask(const TaskKey& key, const scope::CgroupPath& cgroup);
    void removeTask(const TaskKey& key);
    /// Drops every task, and every kept interval, not in `running`.
    void retainOnly(const std::set<TaskKey>& running);
    bool knows(const TaskKey& key) const { return tasks_.contains(key); }
    /// The task's cgroup; nullptr when the task is not known.
    const scope::CgroupPath* cgroupOf(const TaskKey& key) const;

    /// The task's allocation slice as the manager reports it (alloc_slice;
    /// "" for a flat task). That slice's cgroup is the ancestor of the
    /// task's cgroup with its name, and the allocation is sampled there
    /// from now on while it has a running task in it. NoSuchTask;
    /// InvalidArgument when the task's cgroup has no such ancestor (the
    /// task then counts on its own, as a flat one).
    common::Result<void> setAllocSlice(const TaskKey& key, const std::string& slice);
    /// Whether the task's allocation slice (or its being flat) is known.
    /// Until it is, the task counts in its allocation's totals on its own.
    bool allocSliceKnown(const TaskKey& key) const;
    /// A task of the allocation whose allocation slice is not known yet.
    std::optional<TaskKey> sliceUnknown(const std::string& allocId) const;

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

    /// The totals of the allocation's running tasks: its slices' latest
    /// samples plus those of its tasks in no slice. NoSuchAllocation (no
    /// running task of it is known), NoSample (no part has a sample yet).
    common::Result<AllocationSample> latestAllocation(const std::string& allocId) const;
    /// The totals of every allocation that has a sample, ordered by id.
    std::vector<AllocationSample> latestAllAllocations() const;
    /// Allocation slices sampled.
    size_t sliceCount() const { return slices_.size(); }

    uint32_t taskCount() const { return static_cast<uint32_t>(tasks_.size()); }
    scope::CgroupVersion cgroupVersion() const { return reader_.version(); }

    /// Samples every task and allocation slice due at `now` and returns
    /// the tasks' samples. The timer calls it with the clock's time; tests
    /// call it with their own.
    std::vector<TaskSample> sampleDue(Clock::time_point now);

private:
    /// One cgroup that is sampled: a task's or an allocation slice's.
    struct Source {
        explicit Source(scope::CgroupPath path) : cgroup(std::move(path)) {}
        scope::CgroupPath cgroup;
        std::optional<scope::CgroupFiles> files;  ///< open between samples; reset when the cgroup went away
        CpuPercentTracker cpu;
        bool unreadable = false;  ///< the last attempt failed (logged once per change)
    };
    struct Reading {
        scope::CgroupStats stats;
        CpuPercent cpu;
    };
    struct Task {
        explicit Task(scope::CgroupPath path) : source(std::move(path)) {}
        Source source;
        std::optional<TaskSample> latest;
        std::optional<std::string> allocSlice;  ///< nullopt: not known yet; "": in none (flat)
    };
    struct SliceSample {
        uint64_t timestampUs = 0;
        uint64_t intervalMs = 0;
        Reading reading;
    };
    struct AllocSlice {
        AllocSlice(std::string alloc, scope::CgroupPath path) : allocId(std::move(alloc)), source(std::move(path)) {}
        std::string allocId;
        Source source;
        size_t members = 0;  ///< running tasks in it
        std::optional<SliceSample> latest;
    };

    std::optional<Reading> read(const std::string& what, Source& s, Clock::time_point now);
    std::optional<TaskSample> sampleOne(const TaskKey& key, Task& t, Clock::time_point now, uint64_t timestampUs);
    void sampleSlice(const TaskKey& entry, Clock::time_point now, uint64_t timestampUs);
    void joinSlice(const TaskKey& key, Task& t, const std::string& slice, const scope::CgroupPath& cgroup);
    void leaveSlice(Task& t);
    /// Puts the task in a slice of its allocation known already, if its cgroup is below one.
    void findKnownSlice(const TaskKey& key, Task& t);
    std::optional<Clock::time_point> nextDue() const;
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
    std::map<std::string, AllocSlice> slices_;  ///< allocation slices with a running task, by name
    StatsSchedule sliceSchedule_;  ///< the slices' samples, on the default interval; keys {alloc id, slice}
    std::map<TaskKey, uint64_t> intervals_;  ///< per-task intervals set by callers (0 = off), persisted
    bool defaultSetByCaller_ = false;        ///< the default is persisted too
    uint64_t timer_ = 0;
    uint64_t changeTimer_ = 0;  ///< a tasksChanged() is due at the loop's next turn
    std::optional<Clock::time_point> armedFor_;
};

}  // namespace taskscope::stream::stats
