#define BOOST_TEST_MODULE cgroup_host
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "scope/cgroup_host.hpp"

using taskscope::scope::cgroupProcsFiles;

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

// One reader of /proc/<pid>/cgroup: the unified line on v2, systemd's
// hierarchy on v1 (hybrid has both: systemd's wins).
BOOST_AUTO_TEST_CASE(a_process_cgroup_from_proc) {
    using taskscope::scope::cgroupOfProcText;
    BOOST_TEST(cgroupOfProcText("0::/nomad.slice/a1-web.scope\n") == "/nomad.slice/a1-web.scope");
    BOOST_TEST(cgroupOfProcText("12:pids:/x\n1:name=systemd:/nomad.slice/a1-web.scope\n0::/other\n") ==
               "/nomad.slice/a1-web.scope");
    BOOST_TEST(cgroupOfProcText("3:cpu:/x\n") == "");
    BOOST_TEST(cgroupOfProcText("") == "");
}

BOOST_AUTO_TEST_CASE(a_cgroup_below_another) {
    using taskscope::scope::cgroupIsWithin;
    BOOST_TEST(cgroupIsWithin("/a.slice/b.scope", "/a.slice"));
    BOOST_TEST(cgroupIsWithin("/a.slice", "/a.slice"));
    BOOST_TEST(!cgroupIsWithin("/a.slice2/b.scope", "/a.slice"));
    BOOST_TEST(cgroupIsWithin("/x", "/"));
}

// Files by CgroupPath: nothing that climbs out of the root is ever named.
BOOST_AUTO_TEST_CASE(cgroup_files_stay_below_the_root) {
    taskscope::scope::CgroupHost v2{"/r", taskscope::scope::CgroupVersion::V2};
    taskscope::scope::CgroupHost v1{"/r", taskscope::scope::CgroupVersion::V1};
    BOOST_TEST(*v2.file("/n.slice/a.scope", "", "cgroup.kill") == "/r/n.slice/a.scope/cgroup.kill");
    BOOST_TEST(*v2.processesFile("/n.slice/a.scope") == "/r/n.slice/a.scope/cgroup.procs");
    BOOST_TEST(*v1.processesFile("/n.slice/a.scope") == "/r/systemd/n.slice/a.scope/cgroup.procs");
    BOOST_TEST(*v2.file("/", "", "cgroup.procs") == "/r/cgroup.procs");
    BOOST_TEST(!v2.file("/n.slice/../../etc", "", "x"));
    BOOST_TEST(!v2.file("", "", "x"));
    BOOST_TEST(!v2.file("relative", "", "x"));
    BOOST_TEST((taskscope::scope::versionOfRootMount("cgroup2") == taskscope::scope::CgroupVersion::V2));
    BOOST_TEST((taskscope::scope::versionOfRootMount("tmpfs") == taskscope::scope::CgroupVersion::V1));
}
