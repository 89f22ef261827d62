#include "stream/stats/stats_schedule.hpp"

#include <algorithm>

namespace taskscope::stream::stats {

namespace {

// The first multiple of `interval` on the clock strictly after `t`.
StatsSchedule::TimePoint gridAfter(StatsSchedule::TimePoint t, StatsSchedule::Ms interval) {
    const auto n = t.time_since_epoch() / interval;
    return StatsSchedule::TimePoint(std::chrono::duration_cast<StatsSchedule::Clock::duration>((n + 1) * interval));
}

}  // namespace

void StatsSchedule::setDue(const TaskKey& key, Entry& e, std::optional<TimePoint> due) {
    if (e.due) queue_.erase({*e.due, key});
    e.due = due;
    if (due) queue_.emplace(*due, key);
}

void StatsSchedule::reschedule(const TaskKey& key, Entry& e, TimePoint now) {
    const auto iv = effective(e);
    if (iv.count() <= 0) return setDue(key, e, std::nullopt);
    if (!e.last) return setDue(key, e, now);
    setDue(key, e, std::max(gridAfter(*e.last, iv), now));
}

void StatsSchedule::add(const TaskKey& key, TimePoint now, std::optional<Ms> own) {
    auto [it, added] = entries_.try_emplace(key);
    if (!added) return;
    it->second.own = own;
    reschedule(key, it->second, now);
}

void StatsSchedule::remove(const TaskKey& key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    setDue(key, it->second, std::nullopt);
    entries_.erase(it);
}

void StatsSchedule::setInterval(const TaskKey& key, std::optional<Ms> own, TimePoint now) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    it->second.own = own;
    reschedule(key, it->second, now);
}

void StatsSchedule::setDefault(Ms interval, TimePoint now) {
    default_ = interval;
    for (auto& [key, e] : entries_)
        if (!e.own) reschedule(key, e, now);
}

StatsSchedule::Ms StatsSchedule::interval(const TaskKey& key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? Ms(0) : effective(it->second);
}

std::optional<StatsSchedule::Ms> StatsSchedule::ownInterval(const TaskKey& key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? std::nullopt : it->second.own;
}

std::optional<StatsSchedule::TimePoint> StatsSchedule::nextDue() const {
    if (queue_.empty()) return std::nullopt;
    return queue_.begin()->first;
}

std::optional<StatsSchedule::TimePoint> StatsSchedule::due(const TaskKey& key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? std::nullopt : it->second.due;
}

std::vector<TaskKey> StatsSchedule::takeDue(TimePoint now) {
    std::vector<TaskKey> out;
    while (!queue_.empty() && queue_.begin()->first <= now) {
        out.push_back(queue_.begin()->second);
        queue_.erase(queue_.begin());
    }
    for (const auto& key : out) {
        auto& e = entries_.at(key);
        e.due.reset();
        e.last = now;
        setDue(key, e, gridAfter(now, effective(e)));
    }
    return out;
}

}  // namespace taskscope::stream::stats
