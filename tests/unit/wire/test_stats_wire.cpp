#define BOOST_TEST_MODULE wire_stats
#include <boost/test/unit_test.hpp>

#include "wire/stats_wire.hpp"

using namespace taskscope::wire;

// AllocationStats shares TaskStats's fields from timestamp_us on, in order:
// a task-shaped copy of an allocation's totals is what the CLI prints.
BOOST_AUTO_TEST_CASE(allocation_stats_carry_the_task_fields_in_order) {
    TaskStats v;
    std::get<kAllocId>(v) = "a1";
    std::get<kTask>(v) = "";
    std::get<kTimestampUs>(v) = 11;
    std::get<kIntervalMs>(v) = 1000;
    std::get<kMeasured>(v) = bit(kCpuPercent) | bit(kPids) | kCountersReset;
    std::get<kCpuUserUs>(v) = 1;
    std::get<kCpuPercent>(v) = 150.5;
    std::get<kCpuSystemPercent>(v) = 2.5;
    std::get<kMemoryUsage>(v) = 4096;
    std::get<kPids>(v) = 7;
    const auto a = allocationStats(v, {"nomad-reserve-a1.slice", "nomad-share-b01-a1.slice"}, 3);
    BOOST_TEST(std::get<kAllocationId>(a) == "a1");
    BOOST_TEST(std::get<kSlices>(a).size() == 2u);
    BOOST_TEST(std::get<kTasks>(a) == 3u);
    BOOST_TEST(std::get<kAllocationTimestampUs>(a) == 11u);
    BOOST_TEST(std::get<kAllocationTimestampUs + 1>(a) == 1000u);  // interval_ms
    BOOST_TEST(std::get<kPids + 1>(a) == 7u);
    BOOST_TEST((taskShaped(a) == v));
}
