#define BOOST_TEST_MODULE shared_source
#include <boost/test/unit_test.hpp>

#include "manager/launch/shared_source.hpp"

using namespace taskscope::manager;

namespace {
// From a systemd host: "/" shared, /run a shared tmpfs, /srv/priv made
// private by an operator, a stack of two mounts at /mnt/x, a space in a name.
constexpr const char* kMountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
    "25 22 0:21 / /run rw,nosuid,nodev shared:12 - tmpfs tmpfs rw,mode=755\n"
    "30 22 0:40 / /srv/priv rw,relatime - tmpfs tmpfs rw\n"
    "31 22 0:41 / /mnt/x rw,relatime - tmpfs tmpfs rw\n"
    "32 31 0:41 / /mnt/x rw,relatime shared:40 master:3 - tmpfs tmpfs rw\n"
    "33 22 0:42 / /mnt/a\\040b rw,relatime - tmpfs tmpfs rw\n";
}  // namespace

BOOST_AUTO_TEST_CASE(longest_mount_point_holds_the_path) {
    auto m = holdingMount(kMountinfo, "/run/isotest/vol");
    BOOST_REQUIRE(m);
    BOOST_TEST(m->mountPoint == "/run");
    BOOST_TEST(m->shared);
    m = holdingMount(kMountinfo, "/var/lib/x");
    BOOST_REQUIRE(m);
    BOOST_TEST(m->mountPoint == "/");
    BOOST_TEST(m->shared);
}

BOOST_AUTO_TEST_CASE(private_mount_is_not_shared) {
    auto m = holdingMount(kMountinfo, "/srv/priv");
    BOOST_REQUIRE(m);
    BOOST_TEST(m->mountPoint == "/srv/priv");
    BOOST_TEST(!m->shared);
}

BOOST_AUTO_TEST_CASE(a_prefix_of_a_name_is_not_a_parent) {
    auto m = holdingMount(kMountinfo, "/srv/private-not");
    BOOST_REQUIRE(m);
    BOOST_TEST(m->mountPoint == "/");
}

BOOST_AUTO_TEST_CASE(top_of_a_stack_counts) {
    auto m = holdingMount(kMountinfo, "/mnt/x/y");
    BOOST_REQUIRE(m);
    BOOST_TEST(m->shared);  // the later (upper) entry, shared and slave
}

BOOST_AUTO_TEST_CASE(escaped_mount_point) {
    auto m = holdingMount(kMountinfo, "/mnt/a b/c");
    BOOST_REQUIRE(m);
    BOOST_TEST(m->mountPoint == "/mnt/a b");
    BOOST_TEST(!m->shared);
}

BOOST_AUTO_TEST_CASE(empty_table) { BOOST_TEST(!holdingMount("", "/x")); }
