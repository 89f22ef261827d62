#define BOOST_TEST_MODULE cpu_list
#include <boost/test/unit_test.hpp>

#include <set>
#include <string>
#include <vector>

#include "common/cpu_list.hpp"

using taskscope::common::formatCpuList;
using taskscope::common::kMaxCpuId;
using taskscope::common::parseCpuList;

namespace {

struct ParseCase {
    std::string text;
    std::set<unsigned> cpus;
};

// Inputs as the kernel writes them (trailing newline included) and the
// forms other writers produce that are still valid.
const std::vector<ParseCase> kValid = {
    {"", {}},
    {"\n", {}},
    {"   \t\n", {}},
    {"0", {0}},
    {"0\n", {0}},
    {"7", {7}},
    {"0-3", {0, 1, 2, 3}},
    {"0-3\n", {0, 1, 2, 3}},
    {"0-3,5,7-8", {0, 1, 2, 3, 5, 7, 8}},
    {"0-3,5,7-8\n", {0, 1, 2, 3, 5, 7, 8}},
    {"0-2,6", {0, 1, 2, 6}},
    {"0-3,6\n", {0, 1, 2, 3, 6}},
    {"4-4", {4}},
    {"5,3,1", {1, 3, 5}},
    {"0-2,1-3", {0, 1, 2, 3}},
    {"1,1", {1}},
    {"007", {7}},
    {"65534-65535", {65534, 65535}},
    {" 2-3 ", {2, 3}},
};

// Each of these must fail, with an error named InvalidCpuList.
const std::vector<std::string> kInvalid = {
    "a",
    "0-a",
    "3x",
    "-1",
    "1-",
    "-",
    ",",
    "1,",
    ",1",
    "1,,2",
    "3-1",
    "1-2-3",
    "1 ,2",
    "1, 2",
    "0 - 3",
    "+1",
    "0x3",
    "1.5",
    "65536",
    "0-65536",
    "99999999999999999999",
    "0-4000000000",
    "0\n1",
};

struct FormatCase {
    std::set<unsigned> cpus;
    std::string text;
};

const std::vector<FormatCase> kFormat = {
    {{}, ""},
    {{0}, "0"},
    {{0, 1}, "0-1"},
    {{0, 1, 2, 3}, "0-3"},
    {{0, 1, 2, 3, 5}, "0-3,5"},
    {{0, 2, 4}, "0,2,4"},
    {{0, 1, 2, 6}, "0-2,6"},
    {{1, 2, 3, 5, 7, 8}, "1-3,5,7-8"},
    {{65535}, "65535"},
};

}  // namespace

BOOST_AUTO_TEST_CASE(parses_valid_lists) {
    for (const auto& c : kValid) {
        BOOST_TEST_CONTEXT("input '" << c.text << "'") {
            auto cpus = parseCpuList(c.text);
            BOOST_TEST_REQUIRE(cpus.ok(), (cpus.ok() ? "" : cpus.error().message));
            BOOST_TEST(*cpus == c.cpus, boost::test_tools::per_element());
        }
    }
}

BOOST_AUTO_TEST_CASE(rejects_garbage) {
    for (const auto& text : kInvalid) {
        BOOST_TEST_CONTEXT("input '" << text << "'") {
            auto cpus = parseCpuList(text);
            BOOST_TEST_REQUIRE(!cpus.ok());
            BOOST_TEST(cpus.error().name == "InvalidCpuList");
            // The message quotes the input, so a log line says which file was bad.
            BOOST_TEST(cpus.error().message.find("invalid CPU list") != std::string::npos);
        }
    }
}

BOOST_AUTO_TEST_CASE(error_messages_say_what_is_wrong) {
    BOOST_TEST(parseCpuList("3-1").error().message.find("descending") != std::string::npos);
    BOOST_TEST(parseCpuList("1,,2").error().message.find("empty element") != std::string::npos);
    BOOST_TEST(parseCpuList("0-a").error().message.find("'a' is not a CPU number") != std::string::npos);
    BOOST_TEST(parseCpuList("70000").error().message.find("exceeds the maximum") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(accepts_the_maximum_cpu_id) {
    auto cpus = parseCpuList(std::to_string(kMaxCpuId));
    BOOST_TEST_REQUIRE(cpus.ok());
    BOOST_TEST(cpus->count(kMaxCpuId) == 1u);
}

BOOST_AUTO_TEST_CASE(formats_canonical_ranges) {
    for (const auto& c : kFormat) {
        BOOST_TEST_CONTEXT("expected '" << c.text << "'") { BOOST_TEST(formatCpuList(c.cpus) == c.text); }
    }
}

// What the kernel prints must come back unchanged, so attributes and
// cpuset files written from a formatted set compare equal to sysfs.
BOOST_AUTO_TEST_CASE(round_trips_canonical_text) {
    for (const auto& c : kFormat) {
        BOOST_TEST_CONTEXT("text '" << c.text << "'") {
            auto cpus = parseCpuList(c.text + "\n");
            BOOST_TEST_REQUIRE(cpus.ok());
            BOOST_TEST(formatCpuList(*cpus) == c.text);
        }
    }
}

BOOST_AUTO_TEST_CASE(normalises_non_canonical_text) {
    auto cpus = parseCpuList("5,0-2,3,4-4,1");
    BOOST_TEST_REQUIRE(cpus.ok());
    BOOST_TEST(formatCpuList(*cpus) == "0-5");
}
