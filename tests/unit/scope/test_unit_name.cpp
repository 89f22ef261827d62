#define BOOST_TEST_MODULE unit_name
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <tuple>

#include "scope/unit_name.hpp"

using namespace taskscope::scope;
using NamePair = std::pair<const char*, const char*>;
using SlicePair = std::pair<const char*, bool>;
BOOST_TEST_DONT_PRINT_LOG_VALUE(NamePair)
BOOST_TEST_DONT_PRINT_LOG_VALUE(SlicePair)
namespace bdata = boost::unit_test::data;

struct NameCase {
    const char* alloc;
    const char* task;
    const char* unit;
};
std::ostream& operator<<(std::ostream& o, const NameCase& c) { return o << c.alloc << "/" << c.task; }

// Dashes stay as Nomad names scopes; everything systemd would escape is.
static const NameCase kNames[] = {
    {"8b3c1f2e-0a4d-4e6f-9b1a-2c3d4e5f6a7b", "web", "8b3c1f2e-0a4d-4e6f-9b1a-2c3d4e5f6a7b-web.scope"},
    {"a1", "web", "a1-web.scope"},
    {"a1", "my task", "a1-my\\x20task.scope"},
    {"a1", "a/b", "a1-a\\x2fb.scope"},
    {"a1", ".hidden", "a1-\\x2ehidden.scope"},
    {"a1", "x.y:z_1", "a1-x.y:z_1.scope"},
    {"a1", "back\\slash", "a1-back\\x5cslash.scope"},
    {"a1", "caf\xc3\xa9", "a1-caf\\xc3\\xa9.scope"},
};
BOOST_DATA_TEST_CASE(scope_names, bdata::make(kNames), c) {
    auto r = taskScopeName(c.alloc, c.task);
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    BOOST_TEST(*r == c.unit);
}

static const NamePair kBad[] = {
    {"", "web"}, {"a1", ""}, {"a1", "new\nline"}, {"a\x01", "web"},
};
BOOST_DATA_TEST_CASE(refused_names, bdata::make(kBad), c) {
    auto r = taskScopeName(c.first, c.second);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "InvalidName");
}

BOOST_AUTO_TEST_CASE(too_long_after_escaping) {
    // 61 spaces escape to 244 characters: with the alloc id and suffix, 259.
    auto r = taskScopeName("a1234567", std::string(61, ' '));
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message.find("longer than systemd's 255") != std::string::npos);
    BOOST_TEST(taskScopeName("a", std::string(200, 'x')).ok());
}

static const SlicePair kSlices[] = {
    {"nomad.slice", true},  {"a-b.slice", true},  {".slice", false},     {"nomad", false},
    {"-a.slice", false},    {"a-.slice", false},  {"a--b.slice", false}, {"a b.slice", false},
};
BOOST_DATA_TEST_CASE(slice_names, bdata::make(kSlices), c) { BOOST_TEST(isValidSliceName(c.first) == c.second); }

BOOST_AUTO_TEST_CASE(object_paths_are_valid_and_distinct) {
    const auto a = taskObjectPath("/org/taskscope/Manager1/task", "a1-web.scope");
    const auto b = taskObjectPath("/org/taskscope/Manager1/task", "a1-web\\x2escope");
    BOOST_TEST(a.rfind("/org/taskscope/Manager1/task/", 0) == 0);
    BOOST_TEST(a != b);
    for (char c : a) BOOST_TEST((std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '/'));
}
