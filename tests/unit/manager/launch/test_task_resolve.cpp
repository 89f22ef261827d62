#define BOOST_TEST_MODULE task_resolve
#include <boost/test/unit_test.hpp>

#include <stdlib.h>
#include <unistd.h>

#include "manager/launch/task_resolve.hpp"

using namespace taskscope;
using manager::resolveTaskSpec;
using spec::parseTaskSpec;
using spec::toJson;

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


// Without a user: root on the host's root (raw_exec), nobody in the task's
// own root (exec); spec/task_spec.hpp kDefaultIsolatedUser says why.
BOOST_AUTO_TEST_CASE(default_user) {
    auto s = parseTaskSpec(R"({"command":"/bin/true"})");
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(s->effectiveUser() == "root");
    BOOST_TEST(!toJson(*s).contains("user"));
    s = parseTaskSpec(R"({"command":"/bin/true","isolation":{}})");
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(s->effectiveUser() == "nobody");
    BOOST_TEST(!toJson(*s).contains("user"));
    s = parseTaskSpec(R"({"command":"/bin/true","isolation":{},"user":"root"})");
    BOOST_TEST(s->effectiveUser() == "root");
    s = parseTaskSpec(R"({"command":"/bin/true","isolation":{"filesystem":false}})");
    BOOST_TEST(s->effectiveUser() == "root");
}

// A deny list is checked against the resolved IDs, before anything is made.
BOOST_AUTO_TEST_CASE(denied_ids_refuse_the_task) {
    auto s = parseTaskSpec(R"({"command":"/bin/true","denied_uids":"0,10-20"})");
    BOOST_REQUIRE(s.ok());
    auto r = resolveTaskSpec(*s);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "DeniedUser");
    BOOST_TEST(r.error().message.find("UID 0") != std::string::npos, r.error().message);
    s = parseTaskSpec(R"({"command":"/bin/true","user":"15","group":"30","denied_uids":"0,10-20"})");
    BOOST_TEST(resolveTaskSpec(*s).error().name == "DeniedUser");
    s = parseTaskSpec(R"({"command":"/bin/true","user":"21","group":"30","denied_uids":"0,10-20"})");
    BOOST_TEST(resolveTaskSpec(*s).ok());
    s = parseTaskSpec(R"({"command":"/bin/true","user":"21","group":"30","denied_gids":"25-35"})");
    r = resolveTaskSpec(*s);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message.find("GID 30") != std::string::npos, r.error().message);
    // Bad ranges never reach the manager's start: the spec is refused.
    BOOST_TEST(parseTaskSpec(R"({"command":"x","denied_uids":"10-5"})").error().name == "InvalidSpec");
    BOOST_TEST(parseTaskSpec(R"({"command":"x","denied_gids":"a"})").error().message.find("denied_gids") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(isolated_root_and_numbers_without_a_database) {
    char tmpl[] = "/tmp/resolve-test.XXXXXX";
    const std::string dir = ::mkdtemp(tmpl);
    auto s = parseTaskSpec(R"({"command":"/bin/true","isolation":{"chroot_env":[]}})");
    BOOST_REQUIRE(s.ok());
    s->isolation.taskDir = dir;  // no etc/passwd in it
    auto r = manager::resolveRootIdentity(*s);
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    // No user: nobody, by the kernel's overflow IDs (no database to ask).
    BOOST_TEST(s->uid == 65534u);
    BOOST_TEST(s->gid == 65534u);
    s->user = "root";
    BOOST_REQUIRE(manager::resolveRootIdentity(*s).ok());
    BOOST_TEST(s->uid == 0u);
    // Nomad's dynamic workload user, as the driver names it.
    s->user = "80001";
    s->group = "80001";
    BOOST_REQUIRE(manager::resolveRootIdentity(*s).ok());
    BOOST_TEST(s->uid == 80001u);
    BOOST_TEST(s->gid == 80001u);
    s->deniedUids = *spec::IdRanges::parse("80000-80100", "denied_uids");
    BOOST_TEST(manager::resolveRootIdentity(*s).error().name == "DeniedUser");
    ::rmdir(dir.c_str());
}
