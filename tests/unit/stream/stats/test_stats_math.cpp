#define BOOST_TEST_MODULE stream_stats_math
#include <boost/test/unit_test.hpp>

#include "stream/stats/stats_math.hpp"

using namespace taskscope::stream::stats;
using namespace std::chrono_literals;
using Clock = CpuPercentTracker::Clock;

namespace {
const Clock::time_point t0 = Clock::time_point(100s);
CpuTimes times(uint64_t total, uint64_t user, uint64_t system) { return {total, user, system}; }
}  // namespace

BOOST_AUTO_TEST_CASE(first_sample_has_no_percent) {
    CpuPercentTracker t;
    const auto p = t.update(times(1000, 600, 400), t0);
    BOOST_TEST(!p.total);
    BOOST_TEST(!p.user);
    BOOST_TEST(!p.system);
    BOOST_TEST(!p.reset);
}

BOOST_AUTO_TEST_CASE(one_busy_core_is_100_percent) {
    CpuPercentTracker t;
    (void)t.update(times(0, 0, 0), t0);
    const auto p = t.update(times(1'000'000, 900'000, 100'000), t0 + 1s);
    BOOST_TEST(*p.total == 100.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*p.user == 90.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*p.system == 10.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(two_busy_cores_are_200_percent_of_one_core) {
    CpuPercentTracker t;
    (void)t.update(times(5'000'000, 4'000'000, 1'000'000), t0);
    // 2 s of wall time, 4 s of CPU time: two cores busy throughout.
    const auto p = t.update(times(9'000'000, 7'800'000, 1'200'000), t0 + 2s);
    BOOST_TEST(*p.total == 200.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*p.user == 190.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*p.system == 10.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(each_sample_is_against_the_previous_one) {
    CpuPercentTracker t;
    (void)t.update(times(0, 0, 0), t0);
    BOOST_TEST(*t.update(times(500'000, 500'000, 0), t0 + 1s).total == 50.0, boost::test_tools::tolerance(1e-9));
    // 250 ms of CPU in 500 ms of wall time.
    BOOST_TEST(*t.update(times(750'000, 750'000, 0), t0 + 1500ms).total == 50.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*t.update(times(750'000, 750'000, 0), t0 + 3s).total == 0.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(a_counter_going_backwards_restarts_the_baseline) {
    CpuPercentTracker t;
    (void)t.update(times(9'000'000, 8'000'000, 1'000'000), t0);
    // The cgroup was recreated: its counters start near zero.
    const auto reset = t.update(times(10'000, 8'000, 2'000), t0 + 1s);
    BOOST_TEST(reset.reset);
    BOOST_TEST(!reset.total);
    BOOST_TEST(!reset.user);
    // The next sample is against the new baseline, not the old one.
    const auto next = t.update(times(510'000, 508'000, 2'000), t0 + 2s);
    BOOST_TEST(!next.reset);
    BOOST_TEST(*next.total == 50.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*next.user == 50.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(only_one_counter_going_back_is_a_reset_too) {
    CpuPercentTracker t;
    (void)t.update(times(1'000'000, 500'000, 500'000), t0);
    BOOST_TEST(t.update(times(2'000'000, 400'000, 600'000), t0 + 1s).reset);
}

BOOST_AUTO_TEST_CASE(unmeasured_counters_have_no_percent) {
    CpuPercentTracker t;
    (void)t.update(CpuTimes{1000, std::nullopt, std::nullopt}, t0);
    const auto p = t.update(CpuTimes{501'000, std::nullopt, std::nullopt}, t0 + 1s);
    BOOST_TEST(*p.total == 50.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(!p.user);
    BOOST_TEST(!p.system);
}

BOOST_AUTO_TEST_CASE(no_wall_time_no_percent) {
    CpuPercentTracker t;
    (void)t.update(times(0, 0, 0), t0);
    BOOST_TEST(!t.update(times(1000, 1000, 0), t0).total);
    // The baseline stayed: the next sample spans from t0.
    BOOST_TEST(*t.update(times(1'000'000, 1'000'000, 0), t0 + 1s).total == 100.0,
               boost::test_tools::tolerance(1e-9));
    BOOST_TEST(!cpuPercent(10, 20, 0ns));
    BOOST_TEST(!cpuPercent(20, 10, 1s));
}
