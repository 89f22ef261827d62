// What a task asks beyond its cgroup limits (spec/task_limits.hpp): docker's
// ulimit names and forms, their refusals with the number that is wrong,
// and the device rules systemd's DeviceAllow= holds to.
#define BOOST_TEST_MODULE task_limits
#include <boost/test/unit_test.hpp>

#include <sys/resource.h>

#include <string>

#include "spec/task_limits.hpp"

using namespace taskscope::spec;

BOOST_AUTO_TEST_CASE(docker_names_map_to_their_rlimits) {
    BOOST_TEST(ulimitResource("nofile") == RLIMIT_NOFILE);
    BOOST_TEST(ulimitResource("nproc") == RLIMIT_NPROC);
    BOOST_TEST(ulimitResource("memlock") == RLIMIT_MEMLOCK);
    BOOST_TEST(ulimitResource("stack") == RLIMIT_STACK);
    BOOST_TEST(ulimitResource("NOFILE") == -1);  // docker's names are lower case
    BOOST_TEST(ulimitResource("") == -1);
    BOOST_TEST(ulimitResource("files") == -1);
    const auto names = ulimitNames();
    BOOST_TEST(names.find("nofile") != std::string::npos);
    BOOST_TEST(names.find(", ") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(both_forms_and_the_word_unlimited) {
    auto both = parseUlimit("1024:4096");
    BOOST_REQUIRE(both.ok());
    BOOST_TEST(both->soft == 1024u);
    BOOST_TEST(both->hard == 4096u);
    auto one = parseUlimit("65536");
    BOOST_REQUIRE(one.ok());
    BOOST_TEST((*one == Ulimit{65536, 65536}));
    auto inf = parseUlimit("1024:unlimited");
    BOOST_REQUIRE(inf.ok());
    BOOST_TEST(inf->hard == kUnlimited);
    BOOST_TEST(formatUlimit(*inf) == "1024:unlimited");
    BOOST_TEST(formatUlimit(*one) == "65536:65536");
    auto zero = parseUlimit("0");
    BOOST_REQUIRE(zero.ok());
    BOOST_TEST((*zero == Ulimit{0, 0}));
}

BOOST_AUTO_TEST_CASE(bad_limits_are_refused_with_what_is_wrong) {
    auto above = parseUlimit("10:5");
    BOOST_REQUIRE(!above.ok());
    BOOST_TEST(above.error().message.find("soft limit 10 is above hard limit 5") != std::string::npos);
    auto aboveInf = parseUlimit("unlimited:5");
    BOOST_REQUIRE(!aboveInf.ok());
    BOOST_TEST(aboveInf.error().message.find("unlimited") != std::string::npos);
    for (const char* bad : {"", ":", "-1", "1:-1", "1.5", "0x10", "10:", ":10", "1:2:3", "18446744073709551616",
                            " 1", "Unlimited"}) {
        auto r = parseUlimit(bad);
        BOOST_TEST(!r.ok(), bad);
    }
    auto neg = parseUlimit("-1");
    BOOST_REQUIRE(!neg.ok());
    BOOST_TEST(neg.error().message.find("soft limit '-1'") != std::string::npos);
    auto hard = parseUlimit("1:x");
    BOOST_REQUIRE(!hard.ok());
    BOOST_TEST(hard.error().message.find("hard limit 'x'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(device_permissions_are_r_w_m_each_once) {
    for (const char* ok : {"r", "w", "m", "rw", "rwm", "mwr", "wm"}) BOOST_TEST(validDevicePermissions(ok), ok);
    for (const char* bad : {"", "rr", "rwmr", "x", "rwx", "R", "rw "}) BOOST_TEST(!validDevicePermissions(bad), bad);
}

BOOST_AUTO_TEST_CASE(device_paths_are_clean_and_under_dev) {
    for (const char* ok : {"/dev/null", "/dev/fuse", "/dev/net/tun", "/dev/nvidia0"}) BOOST_TEST(isDevicePath(ok), ok);
    for (const char* bad : {"", "dev/null", "/dev", "/dev/", "/sys/class/x", "/dev/../etc/shadow", "/dev//null",
                            "/dev/./null", "/devices/x", "/etc/passwd"})
        BOOST_TEST(!isDevicePath(bad), bad);
}

BOOST_AUTO_TEST_CASE(oom_score_adj_range_is_the_kernels) {
    BOOST_TEST(kOomScoreAdjMin == -1000);
    BOOST_TEST(kOomScoreAdjMax == 1000);
}
