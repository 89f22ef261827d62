#define BOOST_TEST_MODULE stream_stats_schedule
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <vector>

#include "stream/stats/stats_schedule.hpp"

using namespace taskscope::stream::stats;
using namespace std::chrono_literals;
using TP = StatsSchedule::TimePoint;
using Ms = StatsSchedule::Ms;

namespace {

const TaskKey a{"a1", "a"}, b{"a1", "b"}, c{"a1", "c"};
// A time that is not on any grid, as a daemon's start is.
const TP start = TP(1000s + 123ms);

// Runs the schedule like the timer would, from `from` until `until`, and
// records when each task was sampled.
std::map<TaskKey, std::vector<TP>> run(StatsSchedule& s, TP until) {
    std::map<TaskKey, std::vector<TP>> seen;
    while (auto next = s.nextDue()) {
        if (*next > until) break;
        for (const auto& k : s.takeDue(*next)) seen[k].push_back(*next);
    }
    return seen;
}

}  // namespace

BOOST_AUTO_TEST_CASE(first_sample_at_once_then_on_the_interval_grid) {
    StatsSchedule s(1s);
    s.add(a, start);
    BOOST_TEST((s.nextDue() == start));
    auto seen = run(s, start + 3500ms);
    BOOST_REQUIRE(seen[a].size() == 4u);
    BOOST_TEST((seen[a][0] == start));
    BOOST_TEST((seen[a][1] == TP(1001s)));
    BOOST_TEST((seen[a][2] == TP(1002s)));
    BOOST_TEST((seen[a][3] == TP(1003s)));
}

BOOST_AUTO_TEST_CASE(each_task_on_its_own_interval_sharing_ticks) {
    StatsSchedule s(1s);
    s.add(a, start);
    s.add(b, start + 10ms, Ms(3000));
    const auto seen = run(s, TP(1010s));
    // a: the start, then every second 1001..1010.
    BOOST_TEST(seen.at(a).size() == 11u);
    // b: its start, then every 3 s on the 3 s grid: 1002, 1005, 1008.
    BOOST_REQUIRE(seen.at(b).size() == 4u);
    BOOST_TEST((seen.at(b)[1] == TP(1002s)));
    BOOST_TEST((seen.at(b)[2] == TP(1005s)));
    BOOST_TEST((seen.at(b)[3] == TP(1008s)));
    // b's ticks are ticks of a too: one batch, not two wakeups.
    for (size_t i = 1; i < seen.at(b).size(); ++i)
        BOOST_TEST((std::find(seen.at(a).begin(), seen.at(a).end(), seen.at(b)[i]) != seen.at(a).end()));
}

BOOST_AUTO_TEST_CASE(tasks_with_one_interval_are_batched) {
    StatsSchedule s(1s);
    s.add(a, start);
    s.add(b, start + 300ms);
    s.add(c, start + 700ms);
    (void)s.takeDue(start + 700ms);  // the three first samples
    BOOST_TEST((s.nextDue() == TP(1001s)));
    const auto batch = s.takeDue(TP(1001s));
    BOOST_TEST(batch.size() == 3u);
}

BOOST_AUTO_TEST_CASE(interval_zero_stops_sampling) {
    StatsSchedule s(1s);
    s.add(a, start, Ms(0));
    BOOST_TEST(!s.nextDue());
    BOOST_TEST(s.interval(a).count() == 0);
    s.add(b, start);
    (void)s.takeDue(start);
    s.setInterval(b, Ms(0), start + 100ms);
    BOOST_TEST(!s.nextDue());
    BOOST_TEST(run(s, start + 10s).empty());
    BOOST_TEST(s.contains(b));
}

BOOST_AUTO_TEST_CASE(default_zero_stops_only_tasks_without_their_own) {
    StatsSchedule s(Ms(0));
    s.add(a, start);
    s.add(b, start, Ms(2000));
    const auto seen = run(s, start + 5s);
    BOOST_TEST(!seen.contains(a));
    BOOST_TEST(seen.at(b).size() == 3u);  // start, 1002, 1004
}

BOOST_AUTO_TEST_CASE(changing_an_interval_takes_effect_at_once) {
    StatsSchedule s(1s);
    s.add(a, start);
    (void)s.takeDue(start);
    (void)s.takeDue(TP(1001s));
    // From 1 s to 3 s at 1001.5: next on the 3 s grid after the last sample.
    s.setInterval(a, Ms(3000), TP(1001s + 500ms));
    BOOST_TEST((s.due(a) == TP(1002s)));
    (void)s.takeDue(TP(1002s));
    BOOST_TEST((s.due(a) == TP(1005s)));
    // Back to the default.
    s.setInterval(a, std::nullopt, TP(1003s));
    BOOST_TEST((s.due(a) == TP(1003s)));
    BOOST_TEST(s.interval(a) == Ms(1000));
    // Off, then on again after a long pause: sampled at once.
    s.setInterval(a, Ms(0), TP(1003s));
    s.setInterval(a, Ms(500), TP(2000s + 1ms));
    BOOST_TEST((s.due(a) == TP(2000s + 1ms)));
}

BOOST_AUTO_TEST_CASE(changing_the_default_moves_only_tasks_that_follow_it) {
    StatsSchedule s(1s);
    s.add(a, start);
    s.add(b, start, Ms(1000));
    (void)s.takeDue(start);
    s.setDefault(Ms(5000), start + 1ms);
    BOOST_TEST((s.due(a) == TP(1005s)));
    BOOST_TEST((s.due(b) == TP(1001s)));
    BOOST_TEST(s.defaultInterval() == Ms(5000));
}

BOOST_AUTO_TEST_CASE(a_late_tick_samples_once_and_returns_to_the_grid) {
    StatsSchedule s(1s);
    s.add(a, start);
    (void)s.takeDue(start);
    // The loop was busy for 3.5 s: one sample, not four.
    BOOST_TEST(s.takeDue(TP(1004s + 600ms)).size() == 1u);
    BOOST_TEST((s.due(a) == TP(1005s)));
}

BOOST_AUTO_TEST_CASE(removed_tasks_are_never_due) {
    StatsSchedule s(1s);
    s.add(a, start);
    s.add(b, start);
    s.remove(a);
    const auto due = s.takeDue(start);
    BOOST_REQUIRE(due.size() == 1u);
    BOOST_TEST((due[0] == b));
    BOOST_TEST(!s.contains(a));
    BOOST_TEST(s.size() == 1u);
    // Adding a known task again keeps its schedule.
    s.add(b, start + 10ms);
    BOOST_TEST((s.due(b) == TP(1001s)));
}
