#define BOOST_TEST_MODULE fingerprint
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "fingerprint/fingerprint.hpp"

namespace fp = taskscope::fingerprint;
namespace fs = std::filesystem;

namespace {

std::string fixtureDir(const std::string& name) {
    const char* root = std::getenv("TASKSCOPE_FIXTURES");
    BOOST_TEST_REQUIRE(root != nullptr, "TASKSCOPE_FIXTURES is not set (run through ctest)");
    return std::string(root) + "/fingerprint/" + name;
}

fp::Roots fixtureRoots(const std::string& name) {
    const std::string dir = fixtureDir(name);
    return {dir + "/sys", dir + "/proc"};
}

using Attributes = std::map<std::string, std::string>;

struct FixtureCase {
    std::string name;
    Attributes attributes;  // every attribute toJson must produce, no more
};

// Expected attributes per tree in tests/fixtures/fingerprint. The comments
// say where each non-obvious value comes from in the tree.
const std::vector<FixtureCase> kCases = {
    {"v2",
     {
         {"unique.cgroups.version", "v2"},
         {"os.cgroups.version", "2"},
         {"unique.cgroup.mountpoint", "/sys/fs/cgroup"},
         {"cgroups.controllers", "cpu,cpuset,hugetlb,io,memory,misc,pids,rdma"},
         {"cgroups.freezer", "true"},
         {"cgroups.cpuset", "true"},
         {"cpu.totalcores", "4"},
         {"cpu.onlinecores", "4"},
         {"cpu.usablecores", "4"},
         {"cpu.reservablecores", "4"},
         {"cpu.usable_cpuset", "0-3"},
         // cpu0,1: cpufreq 3600 MHz each (their cpuinfo 1200 is the current
         // clock and ignored); cpu2,3: cpuinfo 2400.25 + 2399.75.
         {"cpu.totalcompute", "12000"},
         {"memory.totalbytes", "8241741824"},
         {"kernel.version", "6.1.0-18-amd64"},
     }},
    {"hybrid",
     {
         // cgroup2 only at /sys/fs/cgroup/unified: v1, as Nomad decides.
         {"unique.cgroups.version", "v1"},
         {"os.cgroups.version", "1"},
         {"unique.cgroup.mountpoint", "/sys/fs/cgroup"},
         // name=systemd is a hierarchy but not a controller.
         {"cgroups.controllers", "blkio,cpu,cpuacct,cpuset,devices,freezer,memory,pids"},
         {"cgroups.freezer", "true"},
         {"cgroups.cpuset", "true"},
         {"cpu.totalcores", "2"},
         {"cpu.onlinecores", "2"},
         {"cpu.usablecores", "2"},
         {"cpu.reservablecores", "2"},
         {"cpu.usable_cpuset", "0-1"},
         // No cpufreq: 2 x 2596.140 from cpuinfo, rounded.
         {"cpu.totalcompute", "5192"},
         {"memory.totalbytes", "25276502016"},
         {"kernel.version", "6.18.44-fc-v669"},
     }},
    {"legacy",
     {
         {"unique.cgroups.version", "v1"},
         {"os.cgroups.version", "1"},
         {"unique.cgroup.mountpoint", "/sys/fs/cgroup"},
         // Combined hierarchies (cpu,cpuacct and net_cls,net_prio) count
         // each controller; there is no freezer hierarchy.
         {"cgroups.controllers", "cpu,cpuacct,cpuset,memory,net_cls,net_prio,perf_event,pids"},
         {"cgroups.freezer", "false"},
         {"cgroups.cpuset", "true"},
         {"cpu.totalcores", "6"},
         {"cpu.onlinecores", "6"},
         // Old kernel: no cpuset.effective_cpus, so cpuset.cpus (0-3).
         {"cpu.usablecores", "4"},
         {"cpu.reservablecores", "4"},
         {"cpu.usable_cpuset", "0-3"},
         {"cpu.totalcompute", "8000"},
         {"memory.totalbytes", "2065739776"},
         {"kernel.version", "4.19.0-27-amd64"},
     }},
    {"v2-missing-controllers",
     {
         {"unique.cgroups.version", "v2"},
         {"os.cgroups.version", "2"},
         {"unique.cgroup.mountpoint", "/sys/fs/cgroup"},
         {"cgroups.controllers", "cpu,hugetlb,io,misc,pids,rdma"},
         // Only system.slice/cgroup.freeze exists; that is enough.
         {"cgroups.freezer", "true"},
         {"cgroups.cpuset", "false"},
         {"cpu.totalcores", "2"},
         {"cpu.onlinecores", "2"},
         // No cpuset controller, no cpuset.cpus.effective: every online CPU.
         {"cpu.usablecores", "2"},
         {"cpu.reservablecores", "2"},
         {"cpu.usable_cpuset", "0-1"},
         // cpu1 has neither cpufreq nor a cpuinfo entry: left out.
         {"cpu.totalcompute", "1800"},
         {"memory.totalbytes", "1024000000"},
         {"kernel.version", "5.15.0-1-generic"},
     }},
    {"offline-cpus",
     {
         {"unique.cgroups.version", "v2"},
         {"os.cgroups.version", "2"},
         {"unique.cgroup.mountpoint", "/sys/fs/cgroup"},
         {"cgroups.controllers", "cpu,cpuset,io,memory,pids"},
         // No init.scope or system.slice in the tree.
         {"cgroups.freezer", "false"},
         {"cgroups.cpuset", "true"},
         {"cpu.totalcores", "8"},
         {"cpu.onlinecores", "5"},
         {"cpu.usablecores", "4"},
         {"cpu.reservablecores", "4"},
         {"cpu.usable_cpuset", "0-2,6"},
         // 4 usable cores x 2000 MHz; cpu3 (online, outside the cpuset) and
         // cpu7 (offline) have cpufreq files too and must not count.
         {"cpu.totalcompute", "8000"},
         {"memory.totalbytes", "16694915072"},
         {"kernel.version", "6.8.0-31-generic"},
     }},
};

fp::Facts probeFixture(const std::string& name, const fp::ProbeOptions& options = {}) {
    auto facts = fp::probe(fixtureRoots(name), options);
    BOOST_TEST_REQUIRE(facts.ok(), (facts.ok() ? "" : facts.error().message));
    return std::move(facts).value();
}

bool hasNoteContaining(const fp::Facts& facts, const std::string& needle) {
    for (const auto& note : facts.notes)
        if (note.find(needle) != std::string::npos) return true;
    return false;
}

// A scratch tree for the failure cases, built from a minimal valid v2 node
// that each test then breaks in one way.
class ScratchTree {
public:
    ScratchTree() {
        std::string pattern = (fs::temp_directory_path() / "taskscope-fp-XXXXXX").string();
        BOOST_TEST_REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        root_ = pattern;
        write("proc/self/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n");
        write("proc/meminfo", "MemTotal:        1024 kB\n");
        write("proc/sys/kernel/osrelease", "6.1.0\n");
        write("proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 1000.000\n\nprocessor\t: 1\ncpu MHz\t\t: 1000.000\n");
        write("sys/devices/system/cpu/present", "0-1\n");
        write("sys/devices/system/cpu/online", "0-1\n");
        write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu memory\n");
        write("sys/fs/cgroup/cpuset.cpus.effective", "0-1\n");
    }
    ~ScratchTree() {
        std::error_code ignored;
        fs::remove_all(root_, ignored);
    }
    ScratchTree(const ScratchTree&) = delete;
    ScratchTree& operator=(const ScratchTree&) = delete;

    void write(const std::string& rel, const std::string& content) {
        const fs::path p = root_ / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << content;
    }
    void remove(const std::string& rel) { fs::remove(root_ / rel); }
    fp::Roots roots() const { return {(root_ / "sys").string(), (root_ / "proc").string()}; }

private:
    fs::path root_;
};

std::string probeError(const ScratchTree& tree) {
    auto facts = fp::probe(tree.roots());
    BOOST_TEST_REQUIRE(!facts.ok(), "probe was expected to fail");
    return facts.error().message;
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_CASE(fixture_attributes) {
    for (const auto& c : kCases) {
        BOOST_TEST_CONTEXT("fixture " << c.name) {
            const nlohmann::json j = fp::toJson(probeFixture(c.name), "");
            BOOST_TEST_REQUIRE(j.is_object());
            for (const auto& [key, expected] : c.attributes) {
                BOOST_TEST_CONTEXT("attribute " << key) {
                    BOOST_TEST_REQUIRE(j.contains(key));
                    BOOST_TEST_REQUIRE(j.at(key).is_string());
                    BOOST_TEST(j.at(key).get<std::string>() == expected);
                }
            }
            for (const auto& [key, value] : j.items()) {
                BOOST_TEST_CONTEXT("attribute " << key) { BOOST_TEST(c.attributes.count(key) == 1u); }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(systemd_version_only_when_known) {
    const auto facts = probeFixture("v2");
    BOOST_TEST(!fp::toJson(facts, "").contains("systemd.version"));
    const auto j = fp::toJson(facts, "252.39-1~deb12u1");
    BOOST_TEST_REQUIRE(j.contains("systemd.version"));
    BOOST_TEST(j.at("systemd.version").get<std::string>() == "252.39-1~deb12u1");
}

BOOST_AUTO_TEST_CASE(facts_carry_the_sets) {
    const auto facts = probeFixture("offline-cpus");
    BOOST_TEST((facts.cgroupVersion == fp::CgroupVersion::V2));
    BOOST_TEST((facts.presentCpus == std::set<unsigned>{0, 1, 2, 3, 4, 5, 6, 7}));
    BOOST_TEST((facts.onlineCpus == std::set<unsigned>{0, 1, 2, 3, 6}));
    BOOST_TEST((facts.usableCpus == std::set<unsigned>{0, 1, 2, 6}));
    BOOST_TEST((facts.reservableCpus == facts.usableCpus));
    BOOST_TEST(facts.notes.empty());
}

BOOST_AUTO_TEST_CASE(reserved_cores_are_not_reservable) {
    fp::ProbeOptions options;
    options.reservedForSystem = {0, 6, 7};  // 7 is offline: no effect
    const auto facts = probeFixture("offline-cpus", options);
    BOOST_TEST((facts.reservableCpus == std::set<unsigned>{1, 2}));
    const auto j = fp::toJson(facts, "");
    BOOST_TEST(j.at("cpu.usablecores").get<std::string>() == "4");
    BOOST_TEST(j.at("cpu.reservablecores").get<std::string>() == "2");
    // Reserved cores still run system work, so they still count as compute.
    BOOST_TEST(j.at("cpu.totalcompute").get<std::string>() == "8000");
}

BOOST_AUTO_TEST_CASE(notes_explain_degraded_facts) {
    const auto missing = probeFixture("v2-missing-controllers");
    BOOST_TEST(hasNoteContaining(missing, "no cpuset controller"));
    BOOST_TEST(hasNoteContaining(missing, "no frequency known for CPU 1"));

    const auto legacy = probeFixture("legacy");
    BOOST_TEST(legacy.notes.empty());
}

BOOST_AUTO_TEST_CASE(stacked_mount_on_top_decides) {
    ScratchTree tree;
    // tmpfs mounted over a cgroup2 root hides it: the node is v1.
    tree.write("proc/self/mounts",
               "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\ntmpfs /sys/fs/cgroup tmpfs rw 0 0\n"
               "cgroup /sys/fs/cgroup/freezer cgroup rw,freezer 0 0\n");
    auto facts = fp::probe(tree.roots());
    BOOST_TEST_REQUIRE(facts.ok());
    BOOST_TEST((facts->cgroupVersion == fp::CgroupVersion::V1));
    BOOST_TEST(facts->freezer);
    BOOST_TEST(!facts->cpuset);

    tree.write("proc/self/mounts", "tmpfs /sys/fs/cgroup tmpfs rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n");
    facts = fp::probe(tree.roots());
    BOOST_TEST_REQUIRE(facts.ok());
    BOOST_TEST((facts->cgroupVersion == fp::CgroupVersion::V2));
}

BOOST_AUTO_TEST_CASE(cgroup2_elsewhere_is_not_v2) {
    ScratchTree tree;
    tree.write("proc/self/mounts", "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n");
    auto facts = fp::probe(tree.roots());
    BOOST_TEST_REQUIRE(facts.ok());
    BOOST_TEST((facts->cgroupVersion == fp::CgroupVersion::V1));
}

BOOST_AUTO_TEST_CASE(no_cgroups_at_all_is_v1_with_a_note) {
    ScratchTree tree;
    tree.write("proc/self/mounts", "proc /proc proc rw 0 0\nsysfs /sys sysfs rw 0 0\n");
    auto facts = fp::probe(tree.roots());
    BOOST_TEST_REQUIRE(facts.ok());
    BOOST_TEST((facts->cgroupVersion == fp::CgroupVersion::V1));
    BOOST_TEST(facts->controllers.empty());
    BOOST_TEST(!facts->freezer);
    BOOST_TEST(!facts->cpuset);
    BOOST_TEST(hasNoteContaining(*facts, "no cgroup hierarchy mounted"));
    const auto j = fp::toJson(*facts, "");
    BOOST_TEST(!j.contains("unique.cgroup.mountpoint"));
    BOOST_TEST(j.at("unique.cgroups.version").get<std::string>() == "v1");
    BOOST_TEST(j.at("cgroups.controllers").get<std::string>() == "");
    BOOST_TEST(j.at("cpu.usablecores").get<std::string>() == "2");
    BOOST_TEST(j.at("cpu.totalcompute").get<std::string>() == "2000");
}

BOOST_AUTO_TEST_CASE(offline_cpus_in_the_cpuset_are_not_usable) {
    ScratchTree tree;
    tree.write("sys/devices/system/cpu/present", "0-3\n");
    tree.write("sys/devices/system/cpu/online", "0,2\n");
    tree.write("sys/fs/cgroup/cpuset.cpus.effective", "0-3\n");
    auto facts = fp::probe(tree.roots());
    BOOST_TEST_REQUIRE(facts.ok());
    BOOST_TEST((facts->usableCpus == std::set<unsigned>{0, 2}));
}

BOOST_AUTO_TEST_CASE(v1_cpuset_mount_is_read_where_the_table_says) {
    ScratchTree tree;
    tree.write("proc/self/mounts", "cgroup /sys/fs/cgroup/cpu,cpuset cgroup rw,cpu,cpuset 0 0\n");
    tree.write("sys/fs/cgroup/cpu,cpuset/cpuset.effective_cpus", "1\n");
    auto facts = fp::probe(tree.roots());
    BOOST_TEST_REQUIRE(facts.ok());
    BOOST_TEST((facts->usableCpus == std::set<unsigned>{1}));
    BOOST_TEST((facts->controllers == std::set<std::string>{"cpu", "cpuset"}));
}

// The kernel writes a space in a mount point as \040.
BOOST_AUTO_TEST_CASE(escaped_mount_points_are_decoded) {
    ScratchTree tree;
    tree.write("proc/self/mounts", "cgroup /sys/fs/cgroup/my\\040cpuset cgroup rw,cpuset 0 0\n");
    tree.write("sys/fs/cgroup/my cpuset/cpuset.effective_cpus", "0\n");
    auto facts = fp::probe(tree.roots());
    BOOST_TEST_REQUIRE(facts.ok());
    BOOST_TEST((facts->usableCpus == std::set<unsigned>{0}));
    BOOST_TEST(facts->notes.empty());
}

BOOST_AUTO_TEST_CASE(v1_unreadable_cpuset_falls_back_to_online) {
    ScratchTree tree;
    tree.write("proc/self/mounts", "cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0\n");
    auto facts = fp::probe(tree.roots());
    BOOST_TEST_REQUIRE(facts.ok());
    BOOST_TEST((facts->usableCpus == std::set<unsigned>{0, 1}));
    BOOST_TEST(hasNoteContaining(*facts, "cannot read the root cpuset"));
}

struct FailureCase {
    std::string what;
    std::string file;     // written with `content`, or removed when empty
    std::string content;
    std::string message;  // must appear in the error
};

const std::vector<FailureCase> kFailures = {
    {"no present file", "sys/devices/system/cpu/present", "", "read present CPUs"},
    {"garbage online file", "sys/devices/system/cpu/online", "zero\n", "read online CPUs"},
    {"no mount table", "proc/self/mounts", "", "read mount table"},
    {"malformed mount table", "proc/self/mounts", "cgroup2 /sys/fs/cgroup\n", "malformed mount entry"},
    {"v2 without cgroup.controllers", "sys/fs/cgroup/cgroup.controllers", "", "read cgroup controllers"},
    {"garbage effective cpuset", "sys/fs/cgroup/cpuset.cpus.effective", "0-\n", "read usable CPUs"},
    {"no meminfo", "proc/meminfo", "", "read memory size"},
    {"meminfo without MemTotal", "proc/meminfo", "MemFree: 1 kB\n", "no MemTotal line"},
    {"MemTotal in pages", "proc/meminfo", "MemTotal: 12 pages\n", "malformed line"},
    {"no osrelease", "proc/sys/kernel/osrelease", "", "read kernel version"},
    {"empty osrelease", "proc/sys/kernel/osrelease", "\n", "is empty"},
};

BOOST_AUTO_TEST_CASE(broken_trees_fail_with_context) {
    for (const auto& c : kFailures) {
        BOOST_TEST_CONTEXT(c.what) {
            ScratchTree tree;
            if (c.content.empty())
                tree.remove(c.file);
            else
                tree.write(c.file, c.content);
            const std::string message = probeError(tree);
            BOOST_TEST(contains(message, c.message), "message: " << message);
        }
    }
}

BOOST_AUTO_TEST_CASE(proc_mounts_is_the_fallback_table) {
    ScratchTree tree;
    tree.remove("proc/self/mounts");
    tree.write("proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n");
    auto facts = fp::probe(tree.roots());
    BOOST_TEST_REQUIRE(facts.ok());
    BOOST_TEST((facts->cgroupVersion == fp::CgroupVersion::V2));
}
