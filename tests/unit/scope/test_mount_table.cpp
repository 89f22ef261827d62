// The one reader of the kernel's mount tables (scope/mount_table.hpp):
// both formats, the kernel's escapes, the optional fields that say a mount
// is shared, and the mount that holds a path.
#define BOOST_TEST_MODULE mount_table
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "scope/mount_table.hpp"

using namespace taskscope::scope;

namespace {

// proc(5)'s shape, from a Debian 12 guest, with a mount point holding a
// space (the kernel writes it as \040) and a bind from below a root.
const std::string kMountinfo =
    "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
    "26 23 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n"
    "29 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
    "40 29 254:1 /srv/data /mnt/a\\040b rw,relatime - ext4 /dev/vda1 rw\n"
    "41 29 0:40 / /srv/priv rw,relatime - tmpfs tmpfs rw,size=1024k\n"
    "42 41 0:41 / /srv/priv rw,relatime shared:30 master:2 - tmpfs none rw\n";

}  // namespace

BOOST_AUTO_TEST_CASE(mountinfo_fields_escapes_and_peer_groups) {
    auto m = parseMountInfo(kMountinfo, "mountinfo");
    BOOST_REQUIRE(m.ok());
    BOOST_REQUIRE(m->size() == 6u);
    const auto& cg = (*m)[1];
    BOOST_TEST(cg.mountPoint == "/sys/fs/cgroup");
    BOOST_TEST(cg.fsType == "cgroup2");
    BOOST_TEST(cg.root == "/");
    BOOST_TEST(cg.hasOption("nosuid"));
    BOOST_TEST(!cg.hasOption("nsdelegate"));  // the filesystem's, not the mount's
    BOOST_TEST(cg.superOptions == (std::vector<std::string>{"rw", "nsdelegate", "memory_recursiveprot"}),
               boost::test_tools::per_element());
    BOOST_TEST(cg.shared());
    const auto& bind = (*m)[3];
    BOOST_TEST(bind.mountPoint == "/mnt/a b");
    BOOST_TEST(bind.root == "/srv/data");
    BOOST_TEST(bind.source == "/dev/vda1");
    BOOST_TEST(!bind.shared());
    BOOST_TEST((*m)[5].optional == (std::vector<std::string>{"shared:30", "master:2"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(proc_mounts_has_the_same_entries_without_what_it_lacks) {
    auto m = parseMounts("cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0\n"
                         "\n"
                         "tmpfs /run/a\\040b tmpfs rw 0 0\n",
                         "/proc/mounts");
    BOOST_REQUIRE(m.ok());
    BOOST_REQUIRE(m->size() == 2u);
    BOOST_TEST((*m)[0].fsType == "cgroup");
    BOOST_TEST((*m)[0].hasOption("cpuacct"));
    BOOST_TEST((*m)[0].root.empty());
    BOOST_TEST((*m)[1].mountPoint == "/run/a b");
}

BOOST_AUTO_TEST_CASE(a_malformed_line_names_the_file_and_line) {
    auto info = parseMountInfo("22 1 0:21 / /proc rw shared:12 - proc proc rw\n23 1 0:22 /\n", "/proc/self/mountinfo");
    BOOST_REQUIRE(!info.ok());
    BOOST_TEST(info.error().message.find("/proc/self/mountinfo:2") != std::string::npos);
    // No "-" before the filesystem's type.
    BOOST_TEST(!parseMountInfo("22 1 0:21 / /proc rw shared:12 proc proc rw\n", "m").ok());
    // A reader that looks for one kind of mount passes such a line over.
    auto lenient = parseMountInfo("garbage\n22 1 0:21 / /proc rw - proc proc rw\n", "m", true);
    BOOST_REQUIRE(lenient.ok());
    BOOST_TEST(lenient->size() == 1u);
    auto mounts = parseMounts("proc /proc\n", "/proc/mounts");
    BOOST_REQUIRE(!mounts.ok());
    BOOST_TEST(mounts.error().message.find("/proc/mounts:1") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(escapes_that_are_not_octal_stay_as_written) {
    BOOST_TEST(unescapeMountField("a\\040b") == "a b");
    BOOST_TEST(unescapeMountField("a\\134b") == "a\\b");
    BOOST_TEST(unescapeMountField("a\\09b") == "a\\09b");
    BOOST_TEST(unescapeMountField("end\\04") == "end\\04");
    BOOST_TEST(unescapeMountField("\\040") == " ");
}

BOOST_AUTO_TEST_CASE(the_holding_mount_is_the_longest_and_last_of_a_stack) {
    auto m = parseMountInfo(kMountinfo, "mountinfo");
    BOOST_REQUIRE(m.ok());
    const auto* priv = holdingMount(*m, "/srv/priv/x");
    BOOST_REQUIRE(priv);
    BOOST_TEST(priv->source == "none");  // the upper of the two at /srv/priv
    BOOST_TEST(priv->shared());
    const auto* root = holdingMount(*m, "/srv/private-not");
    BOOST_REQUIRE(root);
    BOOST_TEST(root->mountPoint == "/");
    BOOST_TEST(holdingMount(*m, "/mnt/a b/c")->mountPoint == "/mnt/a b");
    BOOST_TEST(!holdingMount(std::vector<MountEntry>{}, "/x"));
}
