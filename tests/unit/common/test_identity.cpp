#define BOOST_TEST_MODULE identity
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/identity.hpp"

using namespace taskscope::common;
namespace fs = std::filesystem;

namespace {
// An isolated task's root with users the host does not have.
struct Root {
    fs::path etc;
    Root() {
        char tmpl[] = "/tmp/identity-test.XXXXXX";
        etc = fs::path(::mkdtemp(tmpl)) / "etc";
        fs::create_directories(etc);
        std::ofstream(etc / "passwd") << "root:x:0:0:root:/root:/bin/sh\n"
                                         "app:x:4242:4300:app:/home/app:/bin/sh\n";
        std::ofstream(etc / "group") << "root:x:0:\n"
                                        "apps:x:4300:\n"
                                        "web:x:4301:app,other\n"
                                        "db:x:4302:other\n";
    }
    ~Root() { fs::remove_all(etc.parent_path()); }
};
}  // namespace

BOOST_AUTO_TEST_CASE(user_of_the_root_not_the_host) {
    Root r;
    auto id = resolveIdentityIn(r.etc, "app", "");
    BOOST_REQUIRE(id.ok());
    BOOST_TEST(id->uid == 4242u);
    BOOST_TEST(id->gid == 4300u);
    BOOST_TEST((id->groups == std::vector<gid_t>{4300, 4301}));
}

BOOST_AUTO_TEST_CASE(group_named_in_the_spec) {
    Root r;
    auto id = resolveIdentityIn(r.etc, "app", "db");
    BOOST_REQUIRE(id.ok());
    BOOST_TEST(id->gid == 4302u);
    BOOST_TEST((id->groups == std::vector<gid_t>{4302, 4301}));
}

BOOST_AUTO_TEST_CASE(unknown_in_the_root) {
    Root r;
    auto id = resolveIdentityIn(r.etc, "nobody-here", "");
    BOOST_REQUIRE(!id.ok());
    BOOST_TEST(id.error().name == "UnknownUser");
    id = resolveIdentityIn(r.etc, "app", "nogroup-here");
    BOOST_REQUIRE(!id.ok());
    BOOST_TEST(id.error().name == "UnknownUser");
    id = resolveIdentityIn(r.etc.string() + "/missing", "app", "");
    BOOST_REQUIRE(!id.ok());
    BOOST_TEST(id.error().name == "UnknownUser");
}

// The task can write its root: a passwd swapped for a link (to a file of
// the host, here another root's passwd) is not read through it.
BOOST_AUTO_TEST_CASE(a_symlinked_passwd_is_not_followed) {
    Root r, other;
    fs::remove(r.etc / "passwd");
    fs::create_symlink(other.etc / "passwd", r.etc / "passwd");
    auto id = resolveIdentityIn(r.etc, "app", "");
    BOOST_REQUIRE(!id.ok());
    BOOST_TEST(id.error().name == "UnknownUser");
    BOOST_TEST(id.error().message.find("cannot read") != std::string::npos, id.error().message);
}

// Nomad's dynamic workload users are numbers no database knows.
BOOST_AUTO_TEST_CASE(numeric_users_need_no_entry) {
    BOOST_TEST(numericId("80001").value() == 80001u);
    BOOST_TEST(!numericId(""));
    BOOST_TEST(!numericId("-1"));
    BOOST_TEST(!numericId("nomad-1"));
    BOOST_TEST(!numericId("4294967295"));  // (uid_t)-1: no ID
    BOOST_TEST(!numericId("99999999999"));
    Root r;
    auto id = resolveIdentityIn(r.etc, "80001", "80001");
    BOOST_REQUIRE(id.ok());
    BOOST_TEST(id->uid == 80001u);
    BOOST_TEST(id->gid == 80001u);
    BOOST_TEST((id->groups == std::vector<gid_t>{80001}));
    id = resolveIdentityIn(r.etc, "80002", "");  // its own number as its group
    BOOST_REQUIRE(id.ok());
    BOOST_TEST(id->gid == 80002u);
    // A number with an entry is that user, with its groups.
    id = resolveIdentityIn(r.etc, "4242", "");
    BOOST_REQUIRE(id.ok());
    BOOST_TEST(id->gid == 4300u);
    BOOST_TEST((id->groups == std::vector<gid_t>{4300, 4301}));
    // No user database at all: still the numbers.
    id = resolveIdentityIn(r.etc.string() + "/missing", "80003", "80003");
    BOOST_REQUIRE(id.ok());
    BOOST_TEST(id->uid == 80003u);
    // The host's databases: the same.
    id = resolveIdentity("80004", "80004");
    BOOST_REQUIRE(id.ok());
    BOOST_TEST(id->uid == 80004u);
    BOOST_TEST((id->groups == std::vector<gid_t>{80004}));
    id = resolveIdentity("0", "");
    BOOST_REQUIRE(id.ok());
    BOOST_TEST(id->gid == 0u);
}
