#define BOOST_TEST_MODULE wire_task_json
#include <boost/test/unit_test.hpp>

#include <string>

#include "wire/task_json.hpp"

using taskscope::wire::parseTaskJson;

namespace {

std::string taskJson(const std::string& spec) {
    return R"({"alloc_id":"a1","task":"web","unit":"a1-web.scope","state":"running","pid":4242,)"
           R"("cgroup":"/nomad.slice/a1-web.scope","exit_code":null,"signal":0,"oom_killed":false,"spec":)" +
           spec + "}";
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_field_the_streamer_uses) {
    auto t = parseTaskJson(taskJson(
        R"({"command":"/bin/sleep","user":"nobody","group":"nogroup","cwd":"/srv","env":{"A":"1"},"logs":false})"));
    BOOST_REQUIRE(t.ok());
    BOOST_TEST(t->allocId == "a1");
    BOOST_TEST(t->task == "web");
    BOOST_TEST(t->unit == "a1-web.scope");
    BOOST_TEST(t->state == "running");
    BOOST_TEST(t->pid == 4242);
    BOOST_TEST(t->cgroup == "/nomad.slice/a1-web.scope");
    BOOST_REQUIRE(t->spec.has_value());
    BOOST_TEST(t->spec->user == "nobody");
    BOOST_TEST(t->spec->group == "nogroup");
    BOOST_TEST(t->spec->cwd == "/srv");
    BOOST_TEST(t->spec->env.at("A") == "1");
    BOOST_TEST(!t->spec->logs);
}

BOOST_AUTO_TEST_CASE(spec_defaults_as_the_manager_has_them) {
    auto t = parseTaskJson(taskJson(R"({"command":"/bin/sleep"})"));
    BOOST_REQUIRE(t.ok());
    BOOST_REQUIRE(t->spec.has_value());
    // No user said: the manager's default, root on the host's root.
    BOOST_TEST(t->spec->user == "");
    BOOST_TEST(t->spec->effectiveUser() == "root");
    BOOST_TEST(t->spec->group == "");
    BOOST_TEST(t->spec->cwd == "/");
    BOOST_TEST(t->spec->env.empty());
    BOOST_TEST(t->spec->logs);
}

BOOST_AUTO_TEST_CASE(spec_as_a_stored_string) {
    auto t = parseTaskJson(taskJson(R"("{\"command\":\"/bin/sleep\",\"logs\":false}")"));
    BOOST_REQUIRE(t.ok());
    BOOST_REQUIRE(t->spec.has_value());
    BOOST_TEST(!t->spec->logs);
    auto broken = parseTaskJson(taskJson(R"("{not json")"));
    BOOST_REQUIRE(broken.ok());
    BOOST_TEST(!broken->spec.has_value());
}

BOOST_AUTO_TEST_CASE(garbage_is_internal) {
    BOOST_TEST(parseTaskJson("not json").error().name == "Internal");
    BOOST_TEST(parseTaskJson("[]").error().name == "Internal");
    BOOST_TEST(parseTaskJson(R"({"state":"running"})").error().name == "Internal");
    BOOST_TEST(parseTaskJson(taskJson(R"({"env":{"A":1}})")).error().name == "Internal");
}

// A number must be a whole one that fits its field: pid = 1e300 was a
// float converted to int64_t with undefined behaviour (UBSan, found by
// replaying task_record's finding against fuzz/task_json; issue 58).
BOOST_AUTO_TEST_CASE(a_number_that_does_not_fit_is_internal_naming_the_field) {
    auto t = parseTaskJson(R"({"state":"running","pid":1e300,"unit":"u","cgroup":"c","spec":{"command":"/bin/true"}})");
    BOOST_REQUIRE(!t.ok());
    BOOST_TEST(t.error().name == "Internal");
    BOOST_TEST(t.error().message.find("pid must be a whole number") != std::string::npos, t.error().message);
    BOOST_TEST(
        !parseTaskJson(R"({"state":"running","pid":1,"unit":"u","cgroup":"c","spec":{},"signal":4294967296})").ok());
}
