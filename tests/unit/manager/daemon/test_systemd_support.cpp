#define BOOST_TEST_MODULE systemd_support
#include <boost/test/unit_test.hpp>

#include "common/error_names.hpp"
#include "manager/daemon/systemd_support.hpp"

// Which systemd the manager runs on, decided at its start.

using namespace taskscope;
using manager::checkSystemdSupport;
using manager::systemdMajor;

BOOST_AUTO_TEST_CASE(major_from_what_systemd_reports) {
    BOOST_TEST(*systemdMajor("257.13-1~deb13u1") == 257);  // Debian 13
    BOOST_TEST(*systemdMajor("252.39-1~deb12u1") == 252);  // Debian 12
    BOOST_TEST(*systemdMajor("252") == 252);
    BOOST_TEST(*systemdMajor("v255") == 255);
    BOOST_TEST(*systemdMajor("252-fake") == 252);  // the bus tier's stand-in
    BOOST_TEST(!systemdMajor(""));
    BOOST_TEST(!systemdMajor("unknown"));
    BOOST_TEST(!systemdMajor("99999999999999"));
}

BOOST_AUTO_TEST_CASE(both_debian_suites_run_on_v2) {
    BOOST_TEST(static_cast<bool>(checkSystemdSupport("252.39-1~deb12u1", true)));
    BOOST_TEST(static_cast<bool>(checkSystemdSupport("257.13-1~deb13u1", true)));
}

BOOST_AUTO_TEST_CASE(v1_only_before_256) {
    BOOST_TEST(static_cast<bool>(checkSystemdSupport("252.39-1~deb12u1", false)));
    BOOST_TEST(static_cast<bool>(checkSystemdSupport("255", false)));
    const auto r = checkSystemdSupport("257.13-1~deb13u1", false);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == common::errors::kNotSupported);
    BOOST_TEST(r.error().message.find("cgroup v1") != std::string::npos);
    BOOST_TEST(r.error().message.find("systemd.unified_cgroup_hierarchy=1") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(too_old_names_the_oldest) {
    const auto r = checkSystemdSupport("247.3-7+deb11u4", true);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().message.find("252") != std::string::npos);
    BOOST_TEST(r.error().message.find("247.3-7+deb11u4") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(unreadable_version_passes) {
    BOOST_TEST(static_cast<bool>(checkSystemdSupport("", false)));
}

BOOST_AUTO_TEST_CASE(pidfds_where_systemd_takes_them) {
    BOOST_TEST(!manager::systemdTakesPidfds("252.39-1~deb12u1"));
    BOOST_TEST(manager::systemdTakesPidfds("257.13-1~deb13u1"));
    BOOST_TEST(!manager::systemdTakesPidfds(""));
}
