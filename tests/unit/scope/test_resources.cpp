#define BOOST_TEST_MODULE resources
#include <boost/test/unit_test.hpp>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "scope/resources.hpp"

using namespace taskscope::scope;

namespace {

std::map<std::string, sdbus::Variant> asMap(const UnitProperties& props) {
    std::map<std::string, sdbus::Variant> m;
    for (const auto& p : props) m.emplace(p.get<0>(), p.get<1>());
    return m;
}

}  // namespace

BOOST_AUTO_TEST_CASE(no_limits_no_properties) { BOOST_TEST(resourceProperties({}).empty()); }

BOOST_AUTO_TEST_CASE(memory_alone_is_the_hard_limit) {
    Resources r;
    r.memoryMb = 256;
    auto m = asMap(resourceProperties(r));
    BOOST_TEST(m.at("MemoryMax").get<uint64_t>() == 256ull << 20);
    // No reservation, said as 0: an update takes an old one away.
    BOOST_TEST(m.at("MemoryLow").get<uint64_t>() == 0u);
    BOOST_TEST(m.at("MemorySwapMax").get<uint64_t>() == 0u);
}

BOOST_AUTO_TEST_CASE(memory_max_oversubscribes) {
    Resources r;
    r.memoryMb = 256;
    r.memoryMaxMb = 1024;
    auto m = asMap(resourceProperties(r));
    BOOST_TEST(m.at("MemoryMax").get<uint64_t>() == 1024ull << 20);
    BOOST_TEST(m.at("MemoryLow").get<uint64_t>() == 256ull << 20);
}

BOOST_AUTO_TEST_CASE(memory_max_minus_one_is_infinity) {
    Resources r;
    r.memoryMb = 256;
    r.memoryMaxMb = -1;
    auto m = asMap(resourceProperties(r));
    BOOST_TEST(m.at("MemoryMax").get<uint64_t>() == std::numeric_limits<uint64_t>::max());
}

BOOST_AUTO_TEST_CASE(shares_to_weight_like_runc) {
    BOOST_TEST(cpuWeightFromShares(2) == 1u);
    BOOST_TEST(cpuWeightFromShares(1024) == 39u);
    BOOST_TEST(cpuWeightFromShares(262144) == 10000u);
    BOOST_TEST(cpuWeightFromShares(0) == 1u);          // clamped
    BOOST_TEST(cpuWeightFromShares(1u << 30) == 10000u);  // clamped
}

BOOST_AUTO_TEST_CASE(cpu_quota_pids_and_cpuset) {
    Resources r;
    r.cpuQuotaPercent = 150;
    r.pidsMax = 64;
    r.allowedCpus = {0, 2, 9};
    auto m = asMap(resourceProperties(r));
    BOOST_TEST(m.at("CPUQuotaPerSecUSec").get<uint64_t>() == 1500000u);
    BOOST_TEST(m.at("TasksMax").get<uint64_t>() == 64u);
    const auto mask = m.at("AllowedCPUs").get<std::vector<uint8_t>>();
    BOOST_TEST(mask == (std::vector<uint8_t>{0x05, 0x02}), boost::test_tools::per_element());
}

// issue 47: disk IO through systemd's IO properties, each device a (path,
// rate) pair as IO*Max= takes them (a(st)).
BOOST_AUTO_TEST_CASE(io_limits_are_systemd_io_properties) {
    Resources r;
    r.ioWeight = 200;
    r.ioReadBps = {{"/dev/vda", 1048576}, {"/dev/vdb", 7}};
    r.ioWriteBps = {{"/dev/vda", 2097152}};
    r.ioReadIops = {{"/dev/vda", 100}};
    r.ioWriteIops = {{"/dev/vda", 50}};
    auto m = asMap(resourceProperties(r));
    using Limits = std::vector<sdbus::Struct<std::string, uint64_t>>;
    BOOST_TEST(m.at("IOWeight").get<uint64_t>() == 200u);
    const auto read = m.at("IOReadBandwidthMax").get<Limits>();
    BOOST_REQUIRE(read.size() == 2u);
    BOOST_TEST(read[0].get<0>() == "/dev/vda");
    BOOST_TEST(read[0].get<1>() == 1048576u);
    BOOST_TEST(read[1].get<0>() == "/dev/vdb");
    BOOST_TEST(m.at("IOWriteBandwidthMax").get<Limits>().at(0).get<1>() == 2097152u);
    BOOST_TEST(m.at("IOReadIOPSMax").get<Limits>().at(0).get<1>() == 100u);
    BOOST_TEST(m.at("IOWriteIOPSMax").get<Limits>().at(0).get<1>() == 50u);
    Resources none;
    none.memoryMb = 1;
    for (const char* p : {"IOWeight", "IOReadBandwidthMax", "IOWriteBandwidthMax", "IOReadIOPSMax", "IOWriteIOPSMax"})
        BOOST_TEST(asMap(resourceProperties(none)).count(p) == 0u, p);
}

BOOST_AUTO_TEST_CASE(a_slice_gets_its_weight_and_cores_from_the_same_table) {
    BOOST_TEST(sliceProperties({}).empty());
    SliceResources s;
    s.cpuWeight = 3200;
    s.allowedCpus = std::set<unsigned>{0, 9};
    const auto props = sliceProperties(s);
    BOOST_REQUIRE(props.size() == 2u);
    // The table's order: the weight first, as a slice was always made.
    BOOST_TEST(props[0].get<0>() == "CPUWeight");
    BOOST_TEST(props[0].get<1>().get<uint64_t>() == 3200u);
    BOOST_TEST(props[1].get<0>() == "AllowedCPUs");
    BOOST_TEST((props[1].get<1>().get<std::vector<uint8_t>>() == std::vector<uint8_t>{0x01, 0x02}));
    // A raw weight, not shares: no conversion on the way.
    BOOST_TEST(asMap(sliceProperties({.cpuWeight = 1, .allowedCpus = std::nullopt})).at("CPUWeight").get<uint64_t>() == 1u);
}

BOOST_AUTO_TEST_CASE(a_slice_can_be_given_an_empty_pool) {
    SliceResources s;
    s.allowedCpus = std::set<unsigned>{};
    const auto m = asMap(sliceProperties(s));
    BOOST_TEST(m.at("AllowedCPUs").get<std::vector<uint8_t>>().empty());
}
