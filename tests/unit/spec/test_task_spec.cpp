#define BOOST_TEST_MODULE task_spec
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "spec/task_spec.hpp"

#include <sys/resource.h>

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
    {R"({"command":"x","cwd":"/tmp\u0000--uid\u00000"})", "cwd must not hold a NUL byte (at byte 4)"},
    // issue 58: the kernel would cut these words at their NUL without a word
    {R"({"command":"x","args":["a","b\u0000c"]})", "args[1] must not hold a NUL byte (at byte 1)"},
    {R"({"command":"x","env":{"A":"1\u0000B=2"}})", "env.A must not hold a NUL byte (at byte 1)"},
    {R"({"command":"x","env":{"A\u0000B":"1"}})", "env name 'A' is not valid"},
    {R"({"command":"x\u0000y"})", "command must not hold a NUL byte (at byte 1)"},
    {R"({"command":"x","kill_signal":"SIGNOPE"})", "unknown signal"},
    {R"({"command":"x","resources":{"memory_mb":-5}})", "memory_mb is -5"},
    {R"({"command":"x","resources":{"memory_mb":64,"memory_max_mb":32}})", "below memory_mb"},
    {R"({"command":"x","resources":{"cpu_shares":1}})", "cpu_shares is 1"},
    {R"({"command":"x","resources":{"pids_max":0}})", "pids_max is 0"},
    {R"({"command":"x","resources":{"gpu":1}})", "unknown field resources.gpu"},
    {R"({"command":"x","resources":{"memory_max_mb":0}})", "memory_max_mb must be positive"},
    // issue 47: each bad value names its key
    {R"({"command":"x","ulimits":{"nofile":"10:5"}})", "ulimits.nofile: soft limit 10 is above hard limit 5"},
    {R"({"command":"x","ulimits":{"nofiles":"10"}})", "ulimits: unknown limit 'nofiles'"},
    {R"({"command":"x","ulimits":{"core":"-1"}})", "ulimits.core: soft limit '-1' must be"},
    {R"({"command":"x","ulimits":{"core":"1:x"}})", "ulimits.core: hard limit 'x' must be"},
    {R"({"command":"x","ulimits":{"core":0}})", "ulimits.core must be a string"},
    {R"({"command":"x","ulimits":{"core":"unlimited:0"}})", "soft limit unlimited is above hard limit 0"},
    {R"({"command":"x","oom_score_adj":1001})", "oom_score_adj is 1001, outside -1000..1000"},
    {R"({"command":"x","devices":[{"host_path":"/etc/passwd"}]})",
     "devices[0].host_path '/etc/passwd' must be a device"},
    {R"({"command":"x","devices":[{"host_path":"/dev/../etc/x"}]})", "devices[0].host_path"},
    {R"({"command":"x","devices":[{"task_path":"/dev/x"}]})", "devices[0].host_path is required"},
    {R"({"command":"x","devices":[{"host_path":"/dev/a","permissions":"rwx"}]})", "devices[0].permissions 'rwx'"},
    {R"({"command":"x","devices":[{"host_path":"/dev/a","permissions":"rr"}]})", "devices[0].permissions 'rr'"},
    {R"({"command":"x","devices":[{"host_path":"/dev/a","task_path":"rel"}]})", "devices[0].task_path"},
    {R"({"command":"x","devices":[{"host_path":"/dev/a"},{"host_path":"/dev/b","task_path":"/dev/a"}]})",
     "devices[1] and devices[0] are both at /dev/a"},
    {R"({"command":"x","resources":{"io_weight":0}})", "resources.io_weight is 0, outside 1..10000"},
    {R"({"command":"x","resources":{"io_read_bps":{"sda":1}}})", "resources.io_read_bps: 'sda' must be a block device"},
    {R"({"command":"x","resources":{"io_write_iops":{"/dev/sda":0}}})",
     "resources.io_write_iops[\"/dev/sda\"] must be a positive"},
    {R"({"command":"x","resources":{"io_read_iops":[1]}})", "resources.io_read_iops must be an object"},
    {R"({"command":"x","dns":{"servers":["8.8.8"]}})", "dns.servers: \"8.8.8\" is not an IP address"},
    {R"({"command":"x","dns":{"searches":["a b"]}})", "dns.searches: \"a b\" is not a domain"},
    {R"({"command":"x","dns":{"options":[""]}})", "dns.options"},
    {R"({"command":"x","dns":{"server":["1.1.1.1"]}})", "unknown field dns.server"},
    {R"({"command":"x","hosts":{"hostname":"web"}})", "hosts.address is required"},
    {R"({"command":"x","hosts":{"hostname":"a b","address":"10.0.0.1"}})", "hosts.hostname 'a b' is not a host name"},
    {R"({"command":"x","hosts":{"hostname":"web","address":"10.0.0"}})", "hosts.address '10.0.0' is not an IP address"},
    // issue 59: the journal gets a copy of what the streamer collects only
    {R"({"command":"x","log_journal":"yes"})", "log_journal must be"},
    {R"({"command":"x","logs":false,"log_journal":true})", "log_journal needs logs"},
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

// log_journal: absent is the node's default (unset), either value is kept,
// and false goes with any output (it asks for nothing).
BOOST_AUTO_TEST_CASE(log_journal_is_optional_and_round_trips) {
    auto plain = parseTaskSpec(R"({"command":"true"})");
    BOOST_REQUIRE(plain.ok());
    BOOST_TEST(!plain->logJournal.has_value());
    BOOST_TEST(!toJson(*plain).contains("log_journal"));
    for (bool on : {true, false}) {
        auto s = parseTaskSpec(on ? R"({"command":"true","log_journal":true})"
                                  : R"({"command":"true","log_journal":false})");
        BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
        BOOST_TEST((s->logJournal == on));
        auto back = parseTaskSpec(toText(*s));
        BOOST_REQUIRE(back.ok());
        BOOST_TEST((back->logJournal == on));
    }
    // Output for the caller's paths (Nomad's fifos) may be copied too: the
    // streamer forwards it there. Its record (logs false once parsed) reads
    // back the same, or a manager's restart would lose the task.
    for (const char* paths : {R"({"command":"true","stdout_path":"/a/out","log_journal":true})",
                              R"({"command":"true","stderr_path":"/a/err","logs":true,"log_journal":true})"}) {
        auto s = parseTaskSpec(paths);
        BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
        BOOST_TEST(!s->logs);
        BOOST_TEST((s->logJournal == true));
        auto back = parseTaskSpec(toText(*s));
        BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? std::string() : back.error().message));
        BOOST_TEST((back->logJournal == true));
    }
    auto off = parseTaskSpec(R"({"command":"true","stdout_path":"/a/out","logs":false,"log_journal":false})");
    BOOST_REQUIRE_MESSAGE(off.ok(), (off.ok() ? std::string() : off.error().message));
    BOOST_TEST((off->logJournal == false));
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

// issue 47: rlimits, the OOM score, devices and IO limits, read and written back.
BOOST_AUTO_TEST_CASE(limits_devices_and_io_round_trip) {
    auto s = parseTaskSpec(R"({"command":"true","ulimits":{"nofile":"65536:65536","core":"0","memlock":"unlimited",
        "nproc":"100:unlimited"},"oom_score_adj":-5,
        "devices":[{"host_path":"/dev/nvidia0"},{"host_path":"/dev/fuse","task_path":"/dev/f","permissions":"rw"}],
        "resources":{"io_weight":200,"io_read_bps":{"/dev/vda":1048576},"io_write_bps":{"/dev/vda":2097152},
        "io_read_iops":{"/dev/vda":100},"io_write_iops":{"/dev/vdb":50}}})");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
    BOOST_TEST((s->ulimits.at("nofile") == Ulimit{65536, 65536}));
    BOOST_TEST((s->ulimits.at("core") == Ulimit{0, 0}));
    BOOST_TEST((s->ulimits.at("memlock") == Ulimit{kUnlimited, kUnlimited}));
    BOOST_TEST((s->ulimits.at("nproc") == Ulimit{100, kUnlimited}));
    BOOST_TEST(s->oomScoreAdj == -5);
    BOOST_TEST(s->devices.size() == 2u);
    BOOST_TEST(s->devices[0].seenAt() == "/dev/nvidia0");
    BOOST_TEST(s->devices[0].permissions == "rwm");
    BOOST_TEST(s->devices[1].seenAt() == "/dev/f");
    BOOST_TEST(*s->resources.ioWeight == 200u);
    BOOST_TEST(s->resources.ioReadBps.at("/dev/vda") == 1048576u);
    BOOST_TEST(s->resources.ioWriteIops.at("/dev/vdb") == 50u);
    BOOST_TEST(s->resources.hasIo());
    auto back = taskSpecFromJson(toJson(*s));
    BOOST_REQUIRE(back.ok());
    BOOST_TEST((*back == *s));
    const auto j = toJson(*s);
    BOOST_TEST(j["ulimits"]["core"] == "0:0");
    BOOST_TEST(j["ulimits"]["nproc"] == "100:unlimited");
    BOOST_TEST(j["oom_score_adj"] == -5);
    BOOST_TEST(!j["devices"][0].contains("permissions"));
    // The default score is 0, written to every task: not part of the JSON.
    auto plain = parseTaskSpec(R"({"command":"true"})");
    BOOST_TEST(plain->oomScoreAdj == 0);
    BOOST_TEST(!toJson(*plain).contains("oom_score_adj"));
    BOOST_TEST(!plain->resources.hasIo());
}

BOOST_AUTO_TEST_CASE(network_files_round_trip_and_complete) {
    auto s = parseTaskSpec(R"({"command":"true","dns":{"servers":["10.0.0.53","fd00::1"],"options":["ndots:2"]},
        "hosts":{"hostname":"web-1","address":"172.26.64.5"}})");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
    BOOST_TEST(s->dns->servers.size() == 2u);
    BOOST_TEST(s->hosts->hostname == "web-1");
    auto back = taskSpecFromJson(toJson(*s));
    BOOST_REQUIRE(back.ok());
    BOOST_TEST((*back == *s));
    // Nomad's rule: what the block leaves empty is the host's.
    const auto host =
        "# comment\nnameserver 192.0.2.53\nnameserver nonsense\ndomain old.example\nsearch a.example b.example\n"
        "options edns0 rotate\n";
    const auto full = completedDns(*s->dns, host);
    BOOST_TEST((full.servers == std::vector<std::string>{"10.0.0.53", "fd00::1"}));
    BOOST_TEST((full.searches == std::vector<std::string>{"a.example", "b.example"}));
    BOOST_TEST((full.options == std::vector<std::string>{"ndots:2"}));
    const auto onlySearch = completedDns(DnsConfig{{}, {"x.example"}, {}}, host);
    BOOST_TEST((onlySearch.servers == std::vector<std::string>{"192.0.2.53"}));
    BOOST_TEST((onlySearch.options == std::vector<std::string>{"edns0", "rotate"}));
    BOOST_TEST(isIpAddress("::1"));
    BOOST_TEST(!isIpAddress("localhost"));
}

BOOST_AUTO_TEST_CASE(ulimit_text) {
    BOOST_TEST((*parseUlimit("5") == Ulimit{5, 5}));
    BOOST_TEST((*parseUlimit("1:2") == Ulimit{1, 2}));
    BOOST_TEST(!parseUlimit(""));
    BOOST_TEST(!parseUlimit("1:"));
    BOOST_TEST(!parseUlimit(":1"));
    BOOST_TEST(!parseUlimit("1:2:3"));
    BOOST_TEST(!parseUlimit("99999999999999999999"));
    BOOST_TEST(formatUlimit({1, kUnlimited}) == "1:unlimited");
    BOOST_TEST(ulimitResource("nofile") == RLIMIT_NOFILE);
    BOOST_TEST(ulimitResource("NOFILE") == -1);
    BOOST_TEST(validDevicePermissions("mwr"));
    BOOST_TEST(!validDevicePermissions(""));
    BOOST_TEST(isDevicePath("/dev/dri/card0"));
    BOOST_TEST(!isDevicePath("/dev"));
    BOOST_TEST(!isDevicePath("/devices/x"));
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
