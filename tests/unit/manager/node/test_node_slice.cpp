#define BOOST_TEST_MODULE node_slice
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "manager/daemon/config_file.hpp"
#include "manager/node/node_slice.hpp"
#include "support/temp_dir.hpp"

// What nomad.slice is given to keep the node's own share: pure, from the
// config and the node's capacity.

using namespace taskscope;
using manager::NodeCapacity;
using manager::NodeSliceConfig;

namespace {

constexpr uint64_t kMiB = 1024 * 1024;

std::map<std::string, uint64_t> asMap(const scope::UnitProperties& p) {
    std::map<std::string, uint64_t> m;
    for (const auto& prop : p) m[std::get<0>(prop)] = std::get<1>(prop).get<uint64_t>();
    return m;
}

void write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
}

}  // namespace

BOOST_AUTO_TEST_CASE(defaults_keep_a_tenth_of_processes_and_memory_and_half_the_weight) {
    const NodeCapacity node{32768, 8192 * kMiB};
    auto p = asMap(manager::nodeSliceProperties(NodeSliceConfig{}, node));
    BOOST_TEST(p.size() == 3u);
    BOOST_TEST(p["CPUWeight"] == 50u);
    BOOST_TEST(p["TasksMax"] == 32768u - 3276u);
    BOOST_TEST(p["MemoryMax"] == 8192 * kMiB - 8192 * kMiB / 10);
}

BOOST_AUTO_TEST_CASE(small_and_large_nodes_keep_the_floors_and_the_cap) {
    BOOST_TEST(manager::defaultReservedPids(4096) == 1024u);
    BOOST_TEST(manager::defaultReservedMemoryBytes(1024 * kMiB) == 256 * kMiB);
    BOOST_TEST(manager::defaultReservedMemoryBytes(1024 * 1024 * kMiB) == 4096 * kMiB);
}

BOOST_AUTO_TEST_CASE(configured_reservations_win_and_zero_weight_leaves_systemds) {
    NodeSliceConfig c;
    c.cpuWeight = 0;
    c.reservedPids = 500;
    c.reservedMemoryMb = 1024;
    auto p = asMap(manager::nodeSliceProperties(c, NodeCapacity{10000, 4096 * kMiB}));
    BOOST_TEST(!p.count("CPUWeight"));
    BOOST_TEST(p["TasksMax"] == 9500u);
    BOOST_TEST(p["MemoryMax"] == 3072 * kMiB);
}

BOOST_AUTO_TEST_CASE(a_reservation_larger_than_the_node_sets_no_limit) {
    NodeSliceConfig c;
    c.reservedMemoryMb = 8192;
    auto p = asMap(manager::nodeSliceProperties(c, NodeCapacity{0, 4096 * kMiB}));
    BOOST_TEST(!p.count("TasksMax"));  // the kernel's limit unknown
    BOOST_TEST(!p.count("MemoryMax"));
    BOOST_TEST(p["CPUWeight"] == 50u);
}

BOOST_AUTO_TEST_CASE(disabled_sets_nothing) {
    NodeSliceConfig c;
    c.enabled = false;
    BOOST_TEST(manager::nodeSliceProperties(c, NodeCapacity{32768, 8192 * kMiB}).empty());
}

BOOST_AUTO_TEST_CASE(capacity_is_the_smaller_kernel_limit_and_memtotal) {
    test::TempDir dir;
    write(dir.path + "/sys/kernel/pid_max", "4194304\n");
    write(dir.path + "/sys/kernel/threads-max", "15698\n");
    write(dir.path + "/meminfo", "MemTotal:        2014560 kB\nMemFree:          1000000 kB\n");
    auto c = manager::readNodeCapacity(dir.path);
    BOOST_TEST(c.processLimit == 15698u);
    BOOST_TEST(c.memoryBytes == 2014560u * 1024u);
}

BOOST_AUTO_TEST_CASE(the_config_keys_parse_and_are_bounded) {
    test::TempDir dir;
    const auto file = dir.path + "/manager.json";
    write(file, R"({"node_slice_cpu_weight": 20, "system_reserved_pids": 2048, "system_reserved_memory_mb": 512})");
    auto c = manager::loadConfig(file);
    BOOST_REQUIRE(c);
    BOOST_TEST(c->nodeSlice.cpuWeight == 20u);
    BOOST_TEST(c->nodeSlice.reservedPids == 2048u);
    BOOST_TEST(c->nodeSlice.reservedMemoryMb == 512u);
    write(file, R"({"node_slice_cpu_weight": 20000})");
    auto bad = manager::loadConfig(file);
    BOOST_REQUIRE(!bad);
    BOOST_TEST(bad.error().message.find("node_slice_cpu_weight") != std::string::npos, bad.error().message);
    write(file, R"({"node_slice_limits": false})");
    auto off = manager::loadConfig(file);
    BOOST_REQUIRE(off);
    BOOST_TEST(!off->nodeSlice.enabled);
}
