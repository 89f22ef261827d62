#define BOOST_TEST_MODULE task_spec
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "spec/task_spec.hpp"

using namespace taskscope::spec;
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
std::ostream& operator<<(std::ostream& o, const Bad& b) {
    return o << b.json;
}

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

// The converter's other way: a spec written and read back is the spec, and
// only what differs from the defaults is written (command and args always).
BOOST_AUTO_TEST_CASE(a_spec_round_trips_through_its_json) {
    auto s = parseTaskSpec(R"({"command":"/bin/sleep","args":["60"],"env":{"A":"1"},"cwd":"/tmp","user":"nobody",
        "kill_signal":"SIGINT","kill_timeout_ms":250,"logs":false,"secret_args":true,"network_namespace":"alloc",
        "resources":{"memory_mb":64,"memory_max_mb":128,"cpu_shares":512,"cpuset":"2-3,5"},
        "plugin":{"type":"csi","name":"n","socket":"s.sock"},
        "isolation":{"volumes":[{"source":"/a","target":"/b","read_only":true}],"cap_drop":["ALL"],"cap_add":["kill"],
        "pid_mode":"host","secrets_size_kb":64}})");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
    auto back = taskSpecFromJson(toJson(*s));
    BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? std::string() : back.error().message));
    BOOST_TEST((*back == *s));
    const auto j = toJson(*s);
    BOOST_TEST(j["kill_signal"] == "SIGINT");
    BOOST_TEST(j["resources"]["cpuset"] == "2-3,5");
    BOOST_TEST(j["isolation"]["cap_drop"] == Json::array({"ALL"}));
    BOOST_TEST(j["isolation"]["cap_add"] == Json::array({"KILL"}));
    BOOST_TEST(j["isolation"]["pid_mode"] == "host");
    BOOST_TEST(j["isolation"]["secrets_size_kb"] == 64);
    BOOST_TEST(!j["plugin"].contains("mount_dir"));
    BOOST_TEST(toText(*parseTaskSpec(R"({"command":"true"})")) == R"({"args":[],"command":"true"})");
}

// GetTask's spec as another daemon reads it: a newer manager's fields are
// skipped, a value of the wrong type is not.
BOOST_AUTO_TEST_CASE(a_lenient_read_skips_unknown_fields_only) {
    const auto j = Json::parse(R"({"command":"true","future_field":1,"isolation":{"future":true}})");
    BOOST_TEST(!taskSpecFromJson(j).ok());
    auto lenient = taskSpecFromJson(j, Strictness::Lenient);
    BOOST_REQUIRE(lenient.ok());
    BOOST_TEST(lenient->isolationGiven);
    BOOST_TEST(!taskSpecFromJson(Json::parse(R"({"command":"true","env":{"A":1}})"), Strictness::Lenient).ok());
}

BOOST_AUTO_TEST_CASE(resources_alone_and_their_merge) {
    auto change = parseResources(R"({"memory_mb":256})");
    BOOST_REQUIRE(change.ok());
    Resources base;
    base.memoryMb = 64;
    base.memoryMaxMb = 128;
    base.pidsMax = 10;
    const auto m = merged(base, *change);
    BOOST_TEST(*m.memoryMb == 256);
    BOOST_TEST(!m.memoryMaxMb.has_value());  // no longer oversubscribed
    BOOST_TEST(*m.pidsMax == 10u);
    BOOST_TEST(!parseResources("{").ok());
    BOOST_TEST(parseResources(R"({"gpu":1})").error().message.find("unknown field resources.gpu") != std::string::npos);
}
