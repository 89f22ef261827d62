#include "stream/stats/stats_sampler.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "common/files.hpp"
#include "common/error_names.hpp"

namespace taskscope::stream::stats {

namespace {

using Ms = StatsSchedule::Ms;

uint64_t wallClockUs() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
}

common::Error noSuchTask(const TaskKey& key) {
    return common::makeError(common::errors::kNoSuchTask, "no running task '" + key.task + "' of allocation '" + key.allocId +
                                               "' is known to the streamer");
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
    if (auto it = tasks_.find(key); it != tasks_.end()) {
        if (it->second.cgroup == cgroup) return;
        // Another cgroup is another set of counters: start afresh.
        spdlog::debug("Task {} moved to cgroup {}", key.str(), cgroup.str());
        it->second = Task(cgroup);
        schedule_.remove(key);
    } else {
        tasks_.emplace(key, Task(cgroup));
        notifyTasksChanged();
    }
    std::optional<Ms> own;
    if (auto i = intervals_.find(key); i != intervals_.end()) own = Ms(i->second);
    schedule_.add(key, Clock::now(), own);
    arm();
}

void StatsSampler::removeTask(const TaskKey& key) {
    if (tasks_.erase(key) == 0) return;
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

void StatsSampler::noteUnreadable(const TaskKey& key, Task& t, const common::Error& error) {
    // Normal while a task ends (its cgroup goes before TaskExited arrives),
    // so once per change and at debug level.
    if (!t.unreadable) spdlog::debug("Cannot sample {} ({}): {}; retrying at its interval", key.str(), t.cgroup.str(),
                                     error.message);
    t.unreadable = true;
}

std::optional<TaskSample> StatsSampler::sampleOne(const TaskKey& key, Task& t, Clock::time_point now,
                                                  uint64_t timestampUs) {
    if (!t.files) {
        auto files = reader_.openCgroup(t.cgroup);
        if (!files) {
            noteUnreadable(key, t, files.error());
            return std::nullopt;
        }
        t.files = std::move(*files);
        // A cgroup opened anew may be a new cgroup: its counters start over.
        t.cpu = CpuPercentTracker();
    }
    auto stats = reader_.read(*t.files);
    if (!stats) {
        t.files.reset();
        noteUnreadable(key, t, stats.error());
        return std::nullopt;
    }
    if (t.unreadable) spdlog::debug("Sampling {} again", key.str());
    t.unreadable = false;
    TaskSample s;
    s.key = key;
    s.timestampUs = timestampUs;
    s.intervalMs = static_cast<uint64_t>(schedule_.interval(key).count());
    s.stats = *stats;
    s.cpu = t.cpu.update(CpuTimes{stats->cpuTotalUs, stats->cpuUserUs, stats->cpuSystemUs}, now);
    t.latest = s;
    return s;
}

std::vector<TaskSample> StatsSampler::sampleDue(Clock::time_point now) {
    std::vector<TaskSample> out;
    const auto due = schedule_.takeDue(now);
    if (due.empty()) return out;
    const auto timestampUs = wallClockUs();
    out.reserve(due.size());
    for (const auto& key : due) {
        auto it = tasks_.find(key);
        if (it == tasks_.end()) continue;
        if (auto s = sampleOne(key, it->second, now, timestampUs)) out.push_back(std::move(*s));
    }
    return out;
}

void StatsSampler::arm() {
    const auto next = schedule_.nextDue();
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
