#define BOOST_TEST_MODULE task_spec
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "manager/task_spec.hpp"

using namespace taskscope::manager;
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_CASE(full_spec) {
    auto s = parseTaskSpec(R"({"command":"/bin/sleep","args":["60"],"env":{"A":"1"},"cwd":"/tmp",
        "user":"nobody","kill_signal":"SIGINT","kill_timeout_ms":250,"logs":false,
        "resources":{"memory_mb":64,"memory_max_mb":128,"cpu_shares":512,"pids_max":10,"cpu_quota_percent":50}})");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
    BOOST_TEST(s->command == "/bin/sleep");
    BOOST_TEST(s->args.size() == 1u);
    BOOST_TEST(s->env.at("A") == "1");
    BOOST_TEST(s->killSignal == 2);
    BOOST_TEST(s->killTimeoutMs == 250);
    BOOST_TEST(!s->logs);
    BOOST_TEST(*s->resources.memoryMaxMb == 128);
    BOOST_TEST(*s->resources.cpuShares == 512u);
}

struct Bad {
    const char* json;
    const char* says;
};
std::ostream& operator<<(std::ostream& o, const Bad& b) { return o << b.json; }

static const Bad kBad[] = {
    {"not json", "not valid JSON"},
    {"[1]", "must be a JSON object"},
    {"{}", "command is required"},
    {R"({"command":"x","bogus":1})", "unknown field bogus"},
    {R"({"command":"x","args":"a"})", "args must be an array"},
    {R"({"command":"x","env":{"A":1}})", "env.A must be a string"},
    {R"({"command":"x","cwd":"rel"})", "absolute"},
    {R"({"command":"x","kill_signal":"SIGNOPE"})", "unknown signal"},
    {R"({"command":"x","resources":{"memory_mb":-5}})", "memory_mb is -5"},
    {R"({"command":"x","resources":{"memory_mb":64,"memory_max_mb":32}})", "below memory_mb"},
    {R"({"command":"x","resources":{"cpu_shares":1}})", "cpu_shares is 1"},
    {R"({"command":"x","resources":{"pids_max":0}})", "pids_max is 0"},
    {R"({"command":"x","resources":{"gpu":1}})", "unknown field resources.gpu"},
    {R"({"command":"x","resources":{"memory_max_mb":0}})", "memory_max_mb must be positive"},
};
BOOST_DATA_TEST_CASE(bad_specs_are_named, bdata::make(kBad), b) {
    auto s = parseTaskSpec(b.json);
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().name == "InvalidSpec");
    BOOST_TEST(s.error().message.find(b.says) != std::string::npos, s.error().message);
}

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

// A scheduler's own output files (Nomad's log fifos) and its chosen cores.
BOOST_AUTO_TEST_CASE(output_paths_and_explicit_cpuset) {
    auto s = parseTaskSpec(R"({"command":"true","stdout_path":"/a/out.fifo","stderr_path":"/a/err.fifo",
        "resources":{"cpuset":"2-3,5"}})");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
    BOOST_TEST(s->stdoutPath == "/a/out.fifo");
    BOOST_TEST(s->stderrPath == "/a/err.fifo");
    BOOST_TEST(!s->logs);  // the streamer keeps nothing of it
    BOOST_TEST((s->resources.cpuset == std::set<unsigned>{2, 3, 5}));
    auto plain = parseTaskSpec(R"({"command":"true"})");
    BOOST_TEST(plain->logs);
    for (const char* bad : {R"({"command":"true","stdout_path":"rel/out"})", R"({"command":"true","stderr_path":""})",
                            R"({"command":"true","stdout_path":1})", R"({"command":"true","resources":{"cpuset":"x"}})",
                            R"({"command":"true","resources":{"cpuset":""}})",
                            R"({"command":"true","resources":{"cpuset":"1","cores":1}})"}) {
        auto r = parseTaskSpec(bad);
        BOOST_TEST(!r.ok(), bad);
        if (!r.ok()) BOOST_TEST(r.error().name == "InvalidSpec");
    }
}
