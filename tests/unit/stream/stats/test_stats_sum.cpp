#define BOOST_TEST_MODULE stream_stats_sum
#include <boost/test/unit_test.hpp>

#include "stream/stats/stats_sum.hpp"

using namespace taskscope::stream::stats;
using taskscope::scope::CgroupStats;

namespace {

CgroupStats part(uint64_t usage, uint64_t cpuUs) {
    CgroupStats s;
    s.memoryUsage = usage;
    s.memoryPeak = usage * 2;
    s.cpuTotalUs = cpuUs;
    s.pids = 1;
    return s;
}

CpuPercent percent(double total) {
    CpuPercent c;
    c.total = total;
    return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_part_is_itself) {
    StatsSum sum;
    sum.add(part(100, 7), percent(12.5));
    BOOST_TEST(sum.parts() == 1u);
    BOOST_TEST(*sum.stats().memoryUsage == 100u);
    BOOST_TEST(*sum.stats().memoryPeak == 200u);
    BOOST_TEST(*sum.cpu().total == 12.5);
    BOOST_TEST(!sum.stats().memoryRss);
    BOOST_TEST(!sum.cpu().user);
}

BOOST_AUTO_TEST_CASE(values_add_and_are_measured_only_in_every_part) {
    StatsSum sum;
    auto a = part(100, 7);
    a.memoryRss = 50;
    sum.add(a, percent(10));
    sum.add(part(300, 3), percent(90));
    auto c = part(1, 1);
    c.memoryRss = 5;
    sum.add(c, CpuPercent{});  // a first sample: no percentage
    BOOST_TEST(sum.parts() == 3u);
    BOOST_TEST(*sum.stats().memoryUsage == 401u);
    BOOST_TEST(*sum.stats().cpuTotalUs == 11u);
    BOOST_TEST(*sum.stats().pids == 3u);
    BOOST_TEST(!sum.stats().memoryRss);   // the second part lacks it
    BOOST_TEST(!sum.stats().memoryPeak);  // peaks do not add
    BOOST_TEST(!sum.cpu().total);         // the third part has none
    BOOST_TEST(!sum.cpu().reset);
}

BOOST_AUTO_TEST_CASE(a_missing_part_or_a_reset_spreads) {
    StatsSum sum;
    CpuPercent reset;
    reset.reset = true;
    sum.add(part(100, 7), reset);
    sum.add(part(100, 7), percent(1));
    BOOST_TEST(sum.cpu().reset);
    BOOST_TEST(*sum.stats().memoryUsage == 200u);
    sum.addMissing();
    sum.add(part(100, 7), percent(1));
    BOOST_TEST(sum.parts() == 4u);
    BOOST_TEST(!sum.stats().memoryUsage);
    BOOST_TEST(!sum.stats().cpuTotalUs);
    BOOST_TEST(sum.cpu().reset);
    StatsSum first;
    first.addMissing();
    first.add(part(1, 1), percent(1));
    BOOST_TEST(!first.stats().memoryUsage);
}
