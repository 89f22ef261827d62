#include "stream/stats/stats_sampler.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

#include "common/clock.hpp"
#include "common/error_names.hpp"
#include "common/files.hpp"
#include "stream/stats/stats_sum.hpp"

namespace taskscope::stream::stats {

namespace {

using Ms = StatsSchedule::Ms;

common::Error noSuchTask(const TaskKey& key) {
    return common::makeError(common::errors::kNoSuchTask, "no running task '" + key.task + "' of allocation '" + key.allocId +
                                               "' is known to the streamer");
}

common::Error noSuchAllocation(const std::string& allocId) {
    return common::makeError(common::errors::kNoSuchAllocation,
                             "no running task of allocation '" + allocId + "' is known to the streamer");
}

}  // namespace

common::Result<void> checkStatsInterval(uint64_t ms, const std::string& what) {
    if (ms == 0 || (ms >= kMinStatsIntervalMs && ms <= kMaxStatsIntervalMs)) return {};
    return common::makeError(common::errors::kInvalidArgument, what + " " + std::to_string(ms) + " ms is out of range: 0 (off) or " +
                                                    std::to_string(kMinStatsIntervalMs) + " to " +
                                                    std::to_string(kMaxStatsIntervalMs) + " ms");
}

common::Result<KeptIntervals> loadStatsIntervals(const std::string& file) {
    KeptIntervals out;
    auto text = common::readFile(file);
    if (!text) {
        if (text.error().name == common::errors::kNotFound) return out;
        return text.error().context("read per-task stats intervals");
    }
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object() || !j.contains("tasks") || !j["tasks"].is_array())
        return common::makeError(common::errors::kInternal, file + ": not a record of stats intervals");
    for (const auto& t : j["tasks"]) {
        if (!t.is_object() || !t.value("alloc_id", nlohmann::json()).is_string() ||
            !t.value("task", nlohmann::json()).is_string() ||
            !t.value("interval_ms", nlohmann::json()).is_number_unsigned())
            return common::makeError(common::errors::kInternal, file + ": malformed entry " + t.dump());
        const auto ms = t["interval_ms"].get<uint64_t>();
        if (!checkStatsInterval(ms)) return common::makeError(common::errors::kInternal, file + ": bad interval in " + t.dump());
        out.tasks[TaskKey{t["alloc_id"].get<std::string>(), t["task"].get<std::string>()}] = ms;
    }
    if (j.contains("default_interval_ms")) {
        const auto& d = j["default_interval_ms"];
        if (!d.is_number_unsigned() || !checkStatsInterval(d.get<uint64_t>()))
            return common::makeError(common::errors::kInternal, file + ": bad default_interval_ms " + d.dump());
        out.defaultMs = d.get<uint64_t>();
    }
    return out;
}

StatsOptions keptIn(StatsOptions options, std::string file, KeptIntervals kept) {
    options.intervalsFile = std::move(file);
    options.intervals = std::move(kept.tasks);
    if (kept.defaultMs) {
        options.defaultIntervalMs = *kept.defaultMs;
        options.defaultSetByCaller = true;
    }
    return options;
}

StatsSampler::StatsSampler(common::EventLoop& loop, scope::CgroupStatsReader reader, StatsOptions options)
    : loop_(loop),
      reader_(std::move(reader)),
      options_(std::move(options)),
      schedule_(Ms(options_.defaultIntervalMs)),
      sliceSchedule_(Ms(options_.defaultIntervalMs)),
      intervals_(std::move(options_.intervals)),
      defaultSetByCaller_(options_.defaultSetByCaller) {}

StatsSampler::~StatsSampler() {
    if (timer_) loop_.cancelTimer(timer_);
    if (changeTimer_) loop_.cancelTimer(changeTimer_);
}

void StatsSampler::notifyTasksChanged() {
    // Once per turn of the loop: learning 1000 tasks at start is one
    // PropertiesChanged, not 1000.
    if (changeTimer_ || !events_) return;
    changeTimer_ = loop_.addTimer(Clock::now(), [this] {
        changeTimer_ = 0;
        events_->tasksChanged();
    });
}

void StatsSampler::saveIntervals() {
    if (options_.intervalsFile.empty()) return;
    auto tasks = nlohmann::json::array();
    for (const auto& [key, ms] : intervals_)
        tasks.push_back({{"alloc_id", key.allocId}, {"task", key.task}, {"interval_ms", ms}});
    nlohmann::json kept{{"tasks", tasks}};
    if (defaultSetByCaller_) kept["default_interval_ms"] = defaultIntervalMs();
    if (auto r = common::writeFileAtomic(options_.intervalsFile, kept.dump() + "\n"); !r)
        spdlog::warn("Failed to save the stats intervals: {}; a restart would forget them", r.error().message);
}

void StatsSampler::addTask(const TaskKey& key, const scope::CgroupPath& cgroup) {
    auto it = tasks_.find(key);
    if (it != tasks_.end()) {
        if (it->second.source.cgroup == cgroup) return;
        // Another cgroup is another set of counters (and maybe another slice): start afresh.
        spdlog::debug("Task {} moved to cgroup {}", key.str(), cgroup.str());
        leaveSlice(it->second);
        it->second = Task(cgroup);
        schedule_.remove(key);
    } else {
        it = tasks_.emplace(key, Task(cgroup)).first;
        notifyTasksChanged();
    }
    findKnownSlice(key, it->second);
    std::optional<Ms> own;
    if (auto i = intervals_.find(key); i != intervals_.end()) own = Ms(i->second);
    schedule_.add(key, Clock::now(), own);
    arm();
}

void StatsSampler::removeTask(const TaskKey& key) {
    const auto it = tasks_.find(key);
    if (it == tasks_.end()) return;
    leaveSlice(it->second);
    tasks_.erase(it);
    schedule_.remove(key);
    if (intervals_.erase(key)) saveIntervals();
    notifyTasksChanged();
    arm();
}

void StatsSampler::retainOnly(const std::set<TaskKey>& running) {
    bool removed = false;
    for (auto it = tasks_.begin(); it != tasks_.end();) {
        if (running.contains(it->first)) {
            ++it;
            continue;
        }
        schedule_.remove(it->first);
        leaveSlice(it->second);
        it = tasks_.erase(it);
        removed = true;
    }
    const auto kept = intervals_.size();
    std::erase_if(intervals_, [&](const auto& kv) { return !running.contains(kv.first); });
    if (intervals_.size() != kept) saveIntervals();
    if (removed) notifyTasksChanged();
    arm();
}

common::Result<void> StatsSampler::setTaskInterval(const TaskKey& key, int64_t intervalMs) {
    if (!tasks_.contains(key)) return noSuchTask(key);
    if (intervalMs < -1)
        return common::makeError(common::errors::kInvalidArgument, "interval " + std::to_string(intervalMs) +
                                                        " ms is out of range: -1 (the default), 0 (off) or " +
                                                        std::to_string(kMinStatsIntervalMs) + " to " +
                                                        std::to_string(kMaxStatsIntervalMs) + " ms");
    std::optional<Ms> own;
    if (intervalMs >= 0) {
        if (auto r = checkStatsInterval(static_cast<uint64_t>(intervalMs)); !r) return r;
        own = Ms(intervalMs);
        intervals_[key] = static_cast<uint64_t>(intervalMs);
    } else {
        intervals_.erase(key);
    }
    saveIntervals();
    schedule_.setInterval(key, own, Clock::now());
    arm();
    return {};
}

common::Result<void> StatsSampler::setDefaultInterval(uint64_t intervalMs) {
    if (auto r = checkStatsInterval(intervalMs, "default interval"); !r) return r;
    // Kept even when unchanged: a caller's choice outlives the option.
    const bool newlyKept = !defaultSetByCaller_;
    defaultSetByCaller_ = true;
    if (Ms(intervalMs) == schedule_.defaultInterval()) {
        if (newlyKept) saveIntervals();
        return {};
    }
    schedule_.setDefault(Ms(intervalMs), Clock::now());
    sliceSchedule_.setDefault(Ms(intervalMs), Clock::now());
    saveIntervals();
    if (events_) events_->defaultIntervalChanged();
    arm();
    return {};
}

uint64_t StatsSampler::defaultIntervalMs() const { return static_cast<uint64_t>(schedule_.defaultInterval().count()); }

common::Result<uint64_t> StatsSampler::taskInterval(const TaskKey& key) const {
    if (!tasks_.contains(key)) return noSuchTask(key);
    return static_cast<uint64_t>(schedule_.interval(key).count());
}

common::Result<TaskSample> StatsSampler::latest(const TaskKey& key) const {
    auto it = tasks_.find(key);
    if (it == tasks_.end()) return noSuchTask(key);
    if (!it->second.latest)
        return common::makeError(common::errors::kNoSample, "task '" + key.task + "' of allocation '" + key.allocId +
                                                 "' has no sample yet (interval " +
                                                 std::to_string(schedule_.interval(key).count()) + " ms)");
    return *it->second.latest;
}

std::vector<TaskSample> StatsSampler::latestAll() const {
    std::vector<TaskSample> out;
    out.reserve(tasks_.size());
    for (const auto& [key, t] : tasks_)
        if (t.latest) out.push_back(*t.latest);
    return out;
}

std::optional<StatsSampler::Reading> StatsSampler::read(const std::string& what, Source& s, Clock::time_point now) {
    // Unreadable is normal while a task ends (its cgroup goes before
    // TaskExited arrives), so logged once per change and at debug level.
    auto unreadable = [&](const common::Error& error) {
        if (!s.unreadable)
            spdlog::debug("Cannot sample {} ({}): {}; retrying at its interval", what, s.cgroup.str(), error.message);
        s.unreadable = true;
        return std::nullopt;
    };
    if (!s.files) {
        auto files = reader_.openCgroup(s.cgroup);
        if (!files) return unreadable(files.error());
        s.files = std::move(*files);
        // A cgroup opened anew may be a new cgroup: its counters start over.
        s.cpu = CpuPercentTracker();
    }
    auto stats = reader_.read(*s.files);
    if (!stats) {
        s.files.reset();
        return unreadable(stats.error());
    }
    if (s.unreadable) spdlog::debug("Sampling {} again", what);
    s.unreadable = false;
    const auto cpu = s.cpu.update(CpuTimes{stats->cpuTotalUs, stats->cpuUserUs, stats->cpuSystemUs}, now);
    return Reading{*stats, cpu};
}

std::optional<TaskSample> StatsSampler::sampleOne(const TaskKey& key, Task& t, Clock::time_point now,
                                                  uint64_t timestampUs) {
    auto r = read(key.str(), t.source, now);
    if (!r) return std::nullopt;
    TaskSample s;
    s.key = key;
    s.timestampUs = timestampUs;
    s.intervalMs = static_cast<uint64_t>(schedule_.interval(key).count());
    s.stats = r->stats;
    s.cpu = r->cpu;
    t.latest = s;
    return s;
}

void StatsSampler::sampleSlice(const TaskKey& entry, Clock::time_point now, uint64_t timestampUs) {
    auto it = slices_.find(entry.task);
    if (it == slices_.end()) return;
    auto r = read("allocation " + entry.allocId + " (" + entry.task + ")", it->second.source, now);
    if (!r) return;
    it->second.latest =
        SliceSample{timestampUs, static_cast<uint64_t>(sliceSchedule_.interval(entry).count()), std::move(*r)};
}

void StatsSampler::joinSlice(const TaskKey& key, Task& t, const std::string& slice, const scope::CgroupPath& cgroup) {
    t.allocSlice = slice;
    auto [it, added] = slices_.try_emplace(slice, key.allocId, cgroup);
    ++it->second.members;
    if (!added) return;
    spdlog::debug("Sampling allocation {} in {}", key.allocId, cgroup.str());
    sliceSchedule_.add(TaskKey{key.allocId, slice}, Clock::now());
    arm();
    // Its siblings still waiting for their slice may be in this one.
    for (auto s = tasks_.lower_bound(TaskKey{key.allocId, {}}); s != tasks_.end() && s->first.allocId == key.allocId;
         ++s)
        if (!s->second.allocSlice && s->second.source.cgroup.ancestorNamed(slice))
            joinSlice(s->first, s->second, slice, cgroup);
}

void StatsSampler::leaveSlice(Task& t) {
    if (!t.allocSlice || t.allocSlice->empty()) return;
    auto it = slices_.find(*t.allocSlice);
    t.allocSlice.reset();
    if (it == slices_.end() || --it->second.members > 0) return;
    // The allocation's last running task in it: the slice goes with it.
    sliceSchedule_.remove(TaskKey{it->second.allocId, it->first});
    slices_.erase(it);
}

void StatsSampler::findKnownSlice(const TaskKey& key, Task& t) {
    for (const auto& [name, slice] : slices_) {
        if (slice.allocId != key.allocId) continue;
        if (auto cgroup = t.source.cgroup.ancestorNamed(name)) return joinSlice(key, t, name, *cgroup);
    }
}

common::Result<void> StatsSampler::setAllocSlice(const TaskKey& key, const std::string& slice) {
    const auto it = tasks_.find(key);
    if (it == tasks_.end()) return noSuchTask(key);
    auto& t = it->second;
    if (t.allocSlice == slice) return {};
    leaveSlice(t);
    if (slice.empty()) {
        t.allocSlice = slice;
        return {};
    }
    const auto cgroup = t.source.cgroup.ancestorNamed(slice);
    if (!cgroup) {
        t.allocSlice = "";
        return common::makeError(common::errors::kInvalidArgument, "the cgroup " + t.source.cgroup.str() + " of task " +
                                                                      key.str() + " is not below its slice " + slice);
    }
    joinSlice(key, t, slice, *cgroup);
    return {};
}

const scope::CgroupPath* StatsSampler::cgroupOf(const TaskKey& key) const {
    const auto it = tasks_.find(key);
    return it == tasks_.end() ? nullptr : &it->second.source.cgroup;
}

bool StatsSampler::allocSliceKnown(const TaskKey& key) const {
    const auto it = tasks_.find(key);
    return it != tasks_.end() && it->second.allocSlice.has_value();
}

std::optional<TaskKey> StatsSampler::sliceUnknown(const std::string& allocId) const {
    for (auto it = tasks_.lower_bound(TaskKey{allocId, {}}); it != tasks_.end() && it->first.allocId == allocId; ++it)
        if (!it->second.allocSlice) return it->first;
    return std::nullopt;
}

common::Result<AllocationSample> StatsSampler::latestAllocation(const std::string& allocId) const {
    auto it = tasks_.lower_bound(TaskKey{allocId, {}});
    if (it == tasks_.end() || it->first.allocId != allocId) return noSuchAllocation(allocId);
    AllocationSample out;
    out.allocId = allocId;
    StatsSum sum;
    bool sampled = false;
    uint64_t oldest = std::numeric_limits<uint64_t>::max();
    auto add = [&](uint64_t timestampUs, uint64_t intervalMs, const scope::CgroupStats& stats, const CpuPercent& cpu) {
        sum.add(stats, cpu);
        sampled = true;
        oldest = std::min(oldest, timestampUs);
        out.intervalMs = std::max(out.intervalMs, intervalMs);
    };
    for (; it != tasks_.end() && it->first.allocId == allocId; ++it) {
        ++out.tasks;
        const auto& t = it->second;
        if (t.allocSlice && !t.allocSlice->empty()) {
            if (std::find(out.slices.begin(), out.slices.end(), *t.allocSlice) == out.slices.end())
                out.slices.push_back(*t.allocSlice);
        } else if (t.latest) {
            add(t.latest->timestampUs, t.latest->intervalMs, t.latest->stats, t.latest->cpu);
        } else {
            sum.addMissing();
        }
    }
    std::sort(out.slices.begin(), out.slices.end());
    for (const auto& name : out.slices) {
        const auto& latest = slices_.at(name).latest;
        if (latest)
            add(latest->timestampUs, latest->intervalMs, latest->reading.stats, latest->reading.cpu);
        else
            sum.addMissing();
    }
    if (!sampled)
        return common::makeError(common::errors::kNoSample, "allocation '" + allocId + "' has no sample yet");
    out.timestampUs = oldest;
    out.stats = sum.stats();
    out.cpu = sum.cpu();
    return out;
}

std::vector<AllocationSample> StatsSampler::latestAllAllocations() const {
    std::vector<AllocationSample> out;
    for (auto it = tasks_.begin(); it != tasks_.end();) {
        const auto allocId = it->first.allocId;
        if (auto s = latestAllocation(allocId)) out.push_back(std::move(*s));
        it = tasks_.lower_bound(TaskKey{allocId + '\0', {}});
    }
    return out;
}

std::vector<TaskSample> StatsSampler::sampleDue(Clock::time_point now) {
    std::vector<TaskSample> out;
    const auto due = schedule_.takeDue(now);
    const auto slicesDue = sliceSchedule_.takeDue(now);
    if (due.empty() && slicesDue.empty()) return out;
    const auto timestampUs = common::wallClockUs();
    for (const auto& entry : slicesDue) sampleSlice(entry, now, timestampUs);
    out.reserve(due.size());
    for (const auto& key : due) {
        auto it = tasks_.find(key);
        if (it == tasks_.end()) continue;
        if (auto s = sampleOne(key, it->second, now, timestampUs)) out.push_back(std::move(*s));
    }
    return out;
}

std::optional<StatsSampler::Clock::time_point> StatsSampler::nextDue() const {
    const auto tasks = schedule_.nextDue();
    const auto slices = sliceSchedule_.nextDue();
    if (!tasks || !slices) return tasks ? tasks : slices;
    return std::min(*tasks, *slices);
}

void StatsSampler::arm() {
    const auto next = nextDue();
    if (next == armedFor_ && (timer_ || !next)) return;
    if (timer_) loop_.cancelTimer(timer_);
    timer_ = 0;
    armedFor_ = next;
    if (next) timer_ = loop_.addTimer(*next, [this] { onTimer(); });
}

void StatsSampler::onTimer() {
    timer_ = 0;
    armedFor_.reset();
    const auto samples = sampleDue(Clock::now());
    if (!samples.empty() && events_) events_->samplesTaken(samples);
    arm();
}

}  // namespace taskscope::stream::stats
