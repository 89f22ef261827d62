#define BOOST_TEST_MODULE node_checks
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "common/error_names.hpp"
#include "manager/node/node_checks.hpp"

using namespace taskscope;
using namespace taskscope::manager;

namespace {

// A node's /dev as a map of path to file kind.
FileKind fakeDev(std::map<std::string, mode_t> files) {
    return [files](const std::string& p) -> std::optional<mode_t> {
        auto it = files.find(p);
        if (it == files.end()) return std::nullopt;
        return it->second;
    };
}

const FileKind kDev = fakeDev({{"/dev/null", S_IFCHR}, {"/dev/vda", S_IFBLK}, {"/dev/shm", S_IFDIR}});

spec::TaskSpec parsed(const std::string& json) {
    auto s = spec::parseTaskSpec(json);
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
    return *s;
}

void refused(const common::Result<void>& r, const char* name, const std::string& says) {
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == name);
    BOOST_TEST(r.error().message.find(says) != std::string::npos, r.error().message);
}

}  // namespace

BOOST_AUTO_TEST_CASE(devices_must_be_device_nodes_on_the_node) {
    const NodeLimits v2;
    BOOST_TEST(
        checkTaskOnNode(parsed(R"({"command":"x","devices":[{"host_path":"/dev/null"},{"host_path":"/dev/vda"}]})"), v2,
                        kDev)
            .ok());
    refused(checkTaskOnNode(
                parsed(R"({"command":"x","devices":[{"host_path":"/dev/null"},{"host_path":"/dev/gone"}]})"), v2, kDev),
            common::errors::kNoSuchDevice, "devices[1].host_path: /dev/gone does not exist");
    refused(checkTaskOnNode(parsed(R"({"command":"x","devices":[{"host_path":"/dev/shm"}]})"), v2, kDev),
            common::errors::kNoSuchDevice, "/dev/shm is not a device node");
}

BOOST_AUTO_TEST_CASE(io_limits_need_a_controller_and_block_devices) {
    NodeLimits v2;
    const auto io = parsed(R"({"command":"x","resources":{"io_weight":100,"io_read_bps":{"/dev/vda":1},
        "io_write_iops":{"/dev/vda":5}}})");
    BOOST_TEST(checkTaskOnNode(io, v2, kDev).ok());
    refused(checkTaskOnNode(parsed(R"({"command":"x","resources":{"io_read_bps":{"/dev/vdz":1}}})"), v2, kDev),
            common::errors::kNoSuchDevice, "resources.io_read_bps: /dev/vdz does not exist");
    refused(checkTaskOnNode(parsed(R"({"command":"x","resources":{"io_read_bps":{"/dev/null":1}}})"), v2, kDev),
            common::errors::kNoSuchDevice, "/dev/null is not a block device");
    NodeLimits noIo;
    noIo.ioController = false;
    refused(checkTaskOnNode(io, noIo, kDev), common::errors::kNotSupported,
            "resources.io_weight needs the io controller");
    // cgroup v1: weight and bandwidth through blkio, IOPS not at all.
    NodeLimits v1;
    v1.unified = false;
    BOOST_TEST(checkTaskOnNode(parsed(R"({"command":"x","resources":{"io_weight":100,"io_read_bps":{"/dev/vda":1},
        "io_write_bps":{"/dev/vda":1}}})"),
                               v1, kDev)
                   .ok());
    refused(checkTaskOnNode(io, v1, kDev), common::errors::kNotSupported, "resources.io_write_iops: on cgroup v1");
    v1.ioController = false;
    refused(checkIoOnNode(io.resources, v1, kDev), common::errors::kNotSupported, "blkio");
}

BOOST_AUTO_TEST_CASE(nofile_within_nr_open) {
    NodeLimits node;
    node.nrOpen = 1048576;
    BOOST_TEST(checkTaskOnNode(parsed(R"({"command":"x","ulimits":{"nofile":"1048576"}})"), node, kDev).ok());
    refused(checkTaskOnNode(parsed(R"({"command":"x","ulimits":{"nofile":"1:1048577"}})"), node, kDev),
            common::errors::kInvalidSpec,
            "ulimits.nofile: hard limit 1048577 is above this node's fs.nr_open (1048576)");
    refused(checkTaskOnNode(parsed(R"({"command":"x","ulimits":{"nofile":"unlimited"}})"), node, kDev),
            common::errors::kInvalidSpec, "fs.nr_open");
}

BOOST_AUTO_TEST_CASE(network_files_need_an_isolated_task) {
    const NodeLimits node;
    auto s = parsed(R"({"command":"x","dns":{"servers":["10.0.0.1"]}})");
    refused(checkTaskOnNode(s, node, kDev), common::errors::kInvalidSpec, "dns needs an isolated task");
    s.isolation.filesystem = true;
    BOOST_TEST(checkTaskOnNode(s, node, kDev).ok());
    refused(checkTaskOnNode(parsed(R"({"command":"x","hosts":{"hostname":"a","address":"10.0.0.1"}})"), node, kDev),
            common::errors::kInvalidSpec, "hosts needs an isolated task");
}

BOOST_AUTO_TEST_CASE(facts_from_a_cgroup_tree) {
    const auto root = std::filesystem::temp_directory_path() / ("node_checks." + std::to_string(::getpid()));
    std::filesystem::create_directories(root / "cg" / "blkio");
    std::filesystem::create_directories(root / "proc" / "sys" / "fs");
    std::ofstream(root / "cg" / "cgroup.controllers") << "cpuset cpu io memory pids\n";
    std::ofstream(root / "proc" / "sys" / "fs" / "nr_open") << "4096\n";
    auto v2 = NodeLimits::detect(scope::CgroupHost{(root / "cg").string(), scope::CgroupVersion::V2},
                                 (root / "proc").string());
    BOOST_TEST(v2.unified);
    BOOST_TEST(v2.ioController);
    BOOST_TEST(v2.nrOpen == 4096u);
    std::ofstream(root / "cg" / "cgroup.controllers") << "cpu memory\n";
    BOOST_TEST(!NodeLimits::detect(scope::CgroupHost{(root / "cg").string(), scope::CgroupVersion::V2}).ioController);
    auto v1 = NodeLimits::detect(scope::CgroupHost{(root / "cg").string(), scope::CgroupVersion::V1});
    BOOST_TEST(!v1.unified);
    BOOST_TEST(v1.ioController);  // a blkio hierarchy
    std::filesystem::remove_all(root);
}
