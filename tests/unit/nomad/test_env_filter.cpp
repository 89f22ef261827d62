#define BOOST_TEST_MODULE env_filter
#include <boost/test/unit_test.hpp>

#include "nomad/env_filter.hpp"

using namespace taskscope::nomad;

// github.com/ryanuber/go-glob, as raw_exec's denied_envvars uses it.
BOOST_AUTO_TEST_CASE(go_glob) {
    BOOST_TEST(globMatch("*", "ANY"));
    BOOST_TEST(globMatch("AWS_*", "AWS_SECRET"));
    BOOST_TEST(!globMatch("AWS_*", "MY_AWS_SECRET"));
    BOOST_TEST(globMatch("*_TOKEN", "VAULT_TOKEN"));
    BOOST_TEST(!globMatch("*_TOKEN", "VAULT_TOKENS"));
    BOOST_TEST(globMatch("*SECRET*", "A_SECRET_B"));
    BOOST_TEST(globMatch("A*B*C", "AxxBxxC"));
    BOOST_TEST(!globMatch("A*B*C", "AxxCxxB"));
    BOOST_TEST(globMatch("EXACT", "EXACT"));
    BOOST_TEST(!globMatch("EXACT", "EXACTLY"));
    BOOST_TEST(!globMatch("", "X"));
    BOOST_TEST(globMatch("A?", "A?"));  // only * is special
    BOOST_TEST(!globMatch("A?", "AB"));
}

BOOST_AUTO_TEST_CASE(denied_variables_leave) {
    std::map<std::string, std::string> env{{"AWS_KEY", "k"}, {"HOME", "/"}, {"VAULT_TOKEN", "t"}, {"KEEP", "1"}};
    removeDenied(env, {"AWS_*", "*_TOKEN"});
    BOOST_TEST(env.size() == 2u);
    BOOST_TEST(env.count("HOME") == 1u);
    BOOST_TEST(env.count("KEEP") == 1u);
    removeDenied(env, {});
    BOOST_TEST(env.size() == 2u);
}

// Issue 47: NOMAD_UNIX_ADDR is a path too.
BOOST_AUTO_TEST_CASE(host_root_paths) {
    std::map<std::string, std::string> env{{"NOMAD_ALLOC_DIR", "/alloc"},
                                           {"NOMAD_TASK_DIR", "/local"},
                                           {"NOMAD_SECRETS_DIR", "/secrets"},
                                           {"NOMAD_UNIX_ADDR", "unix:///secrets/api.sock"}};
    rewriteForHostRoot(env, {"/n/a1/alloc", "/n/a1/web/local", "/n/a1/web/secrets"});
    BOOST_TEST(env["NOMAD_ALLOC_DIR"] == "/n/a1/alloc");
    BOOST_TEST(env["NOMAD_TASK_DIR"] == "/n/a1/web/local");
    BOOST_TEST(env["NOMAD_SECRETS_DIR"] == "/n/a1/web/secrets");
    BOOST_TEST(env["NOMAD_UNIX_ADDR"] == "unix:///n/a1/web/secrets/api.sock");
    // Without NOMAD_SECRETS_DIR the in-root path is Nomad's /secrets.
    std::map<std::string, std::string> only{{"NOMAD_UNIX_ADDR", "unix:///secrets/api.sock"}};
    rewriteForHostRoot(only, {"/a", "/l", "/s"});
    BOOST_TEST(only["NOMAD_UNIX_ADDR"] == "unix:///s/api.sock");
    // Anything else is the job's own and left alone.
    std::map<std::string, std::string> other{{"NOMAD_UNIX_ADDR", "unix:///run/other.sock"}};
    rewriteForHostRoot(other, {"/a", "/l", "/s"});
    BOOST_TEST(other["NOMAD_UNIX_ADDR"] == "unix:///run/other.sock");
    std::map<std::string, std::string> none;
    rewriteForHostRoot(none, {"/a", "/l", "/s"});
    BOOST_TEST(none.empty());
}
