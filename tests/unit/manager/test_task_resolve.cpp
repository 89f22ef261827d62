#define BOOST_TEST_MODULE task_resolve
#include <boost/test/unit_test.hpp>

#include "manager/task_resolve.hpp"

using namespace taskscope;
using manager::resolveTaskSpec;
using spec::parseTaskSpec;

BOOST_AUTO_TEST_CASE(resolve_finds_binary_in_path_and_user) {
    auto s = parseTaskSpec(R"({"command":"sh"})");
    BOOST_REQUIRE(s.ok());
    auto r = resolveTaskSpec(*s);
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    BOOST_TEST(s->path.find("/sh") != std::string::npos);
    BOOST_TEST(s->uid == 0u);
    BOOST_TEST(!s->env.at("PATH").empty());
}

BOOST_AUTO_TEST_CASE(resolve_errors_are_named) {
    auto s = parseTaskSpec(R"({"command":"no-such-binary-xyz"})");
    BOOST_TEST(resolveTaskSpec(*s).error().name == "NoSuchBinary");
    s = parseTaskSpec(R"({"command":"/etc/passwd"})");
    BOOST_TEST(resolveTaskSpec(*s).error().name == "NoSuchBinary");
    s = parseTaskSpec(R"({"command":"/bin/true","user":"no-such-user-xyz"})");
    BOOST_TEST(resolveTaskSpec(*s).error().name == "UnknownUser");
    s = parseTaskSpec(R"({"command":"/bin/true","group":"no-such-group-xyz"})");
    BOOST_TEST(resolveTaskSpec(*s).error().name == "UnknownUser");
    s = parseTaskSpec(R"({"command":"/bin/true","cwd":"/no/such/dir"})");
    BOOST_TEST(resolveTaskSpec(*s).error().name == "InvalidSpec");
}

