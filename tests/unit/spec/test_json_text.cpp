// spec/json_text: the bounds on outside JSON (issue 58's fuzzing found the
// first: a spec nested 200000 deep took the parser down).
#define BOOST_TEST_MODULE json_text
#include <boost/test/unit_test.hpp>

#include "spec/json_text.hpp"
#include "spec/resources.hpp"
#include "spec/task_spec.hpp"

using namespace taskscope::spec;

namespace {

std::string nested(size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

}  // namespace

// dns.servers' error printed the bad element, and printing recursed once
// per level: StartTask with this 400 KB spec was a segfault.
BOOST_AUTO_TEST_CASE(a_spec_nested_too_deep_is_refused_at_its_byte) {
    const std::string head = R"({"command":"/bin/true","dns":{"servers":[)";
    auto s = parseTaskSpec(head + nested(200000) + "]}}");
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().name == "InvalidSpec");
    // The outer object and dns are 2 levels, servers' array the 3rd: the
    // 65th opens 62 bytes into the nested run.
    const auto at = head.size() + 61;
    BOOST_TEST(s.error().message == "spec nests deeper than 64 at byte " + std::to_string(at));
    BOOST_TEST(!parseResources("{\"cores\":" + nested(100000) + "}").ok());
}

BOOST_AUTO_TEST_CASE(sixty_four_levels_are_fine_and_brackets_in_strings_do_not_count) {
    BOOST_TEST(parseJson(nested(64), "x").ok());
    BOOST_TEST(!parseJson(nested(65), "x").ok());
    BOOST_TEST(parseJson("[\"" + std::string(100, '[') + "\\\"{\"]", "x").ok());
}

BOOST_AUTO_TEST_CASE(a_syntax_error_names_its_byte) {
    auto s = parseTaskSpec(R"({"command":"x",})");
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().name == "InvalidSpec");
    BOOST_TEST(s.error().message.find("spec is not valid JSON at byte 15: ") == 0u, s.error().message);
    auto r = parseResources("{\"memory_mb\":1");
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message.find("resources is not valid JSON at byte 14") == 0u, r.error().message);
}

// A number past a double's range is nlohmann's out_of_range, not a
// parse_error: the first parseJson let it escape (found by fuzz/task_spec).
BOOST_AUTO_TEST_CASE(a_number_out_of_range_is_refused) {
    auto s = parseTaskSpec(std::string(400, '8'));
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().message == "spec is not valid JSON: a number is out of range");
}
