#define BOOST_TEST_MODULE shim_home
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "manager/shim_home.hpp"

using taskscope::manager::cgroupProcsFiles;

namespace {

const std::string kRel = "/system.slice/taskscope-shims.scope";

}  // namespace

BOOST_AUTO_TEST_CASE(cgroup_v2_has_one_hierarchy) {
    const std::string mountinfo =
        "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
        "26 23 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
        "rw,nsdelegate,memory_recursiveprot\n"
        "29 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n";
    const std::vector<std::string> want = {"/sys/fs/cgroup" + kRel + "/cgroup.procs"};
    BOOST_TEST(cgroupProcsFiles(mountinfo, kRel) == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(hybrid_names_every_hierarchy_including_the_unified_one) {
    // Debian 12 booted with systemd.unified_cgroup_hierarchy=0: name=systemd
    // (where systemd tracks and kills), the unified one and the controllers.
    const std::string mountinfo =
        "25 18 0:23 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
        "26 25 0:24 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw\n"
        "27 25 0:25 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup "
        "rw,xattr,name=systemd\n"
        "31 25 0:29 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,memory\n"
        "32 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:16 - cgroup cgroup "
        "rw,cpu,cpuacct\n";
    const std::vector<std::string> want = {
        "/sys/fs/cgroup/unified" + kRel + "/cgroup.procs", "/sys/fs/cgroup/systemd" + kRel + "/cgroup.procs",
        "/sys/fs/cgroup/memory" + kRel + "/cgroup.procs", "/sys/fs/cgroup/cpu,cpuacct" + kRel + "/cgroup.procs"};
    BOOST_TEST(cgroupProcsFiles(mountinfo, kRel) == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_hierarchy_mounted_from_below_its_root_is_skipped) {
    // A container's view: its cgroup namespace root is not the host's.
    const std::string mountinfo =
        "600 590 0:24 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw\n"
        "601 590 0:25 / /sys/fs/cgroup2 rw - cgroup2 cgroup2 rw\n";
    const std::vector<std::string> want = {"/sys/fs/cgroup2" + kRel + "/cgroup.procs"};
    BOOST_TEST(cgroupProcsFiles(mountinfo, kRel) == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(optional_fields_before_the_separator_are_skipped) {
    const std::string mountinfo =
        "26 23 0:24 / /sys/fs/cgroup rw shared:4 master:1 propagate_from:2 - cgroup2 cgroup2 rw\n"
        "garbage line\n";
    const std::vector<std::string> want = {"/sys/fs/cgroup" + kRel + "/cgroup.procs"};
    BOOST_TEST(cgroupProcsFiles(mountinfo, kRel) == want, boost::test_tools::per_element());
}
