#define BOOST_TEST_MODULE isolation
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "manager/launch/isolation.hpp"
#include "spec/task_spec.hpp"

using namespace taskscope::manager;
using namespace taskscope::spec;
namespace bdata = boost::unit_test::data;

namespace {
Isolation parsed(const std::string& iso) {
    auto s = parseTaskSpec(R"({"command":"/bin/true","isolation":)" + iso + "}");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
    BOOST_TEST(s->isolationGiven);
    return s->isolation;
}
bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }
}  // namespace

BOOST_AUTO_TEST_CASE(no_object_is_not_isolated) {
    auto s = parseTaskSpec(R"({"command":"/bin/true"})");
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(!s->isolation.filesystem);
    BOOST_TEST(!s->isolationGiven);
    BOOST_TEST(shimIsolationArgs(s->isolation).empty());
}

BOOST_AUTO_TEST_CASE(full_object) {
    auto iso = parsed(R"({"filesystem":true,"chroot_env":["/usr","/etc"],"pid_mode":"host","ipc_mode":"private",
        "volumes":[{"source":"/srv/a","target":"/data","read_only":true,"propagation":"host-to-task"}],
        "cap_add":["NET_ADMIN"],"cap_drop":["cap_chown"],"secrets_size_kb":2048,"no_new_privs":true,
        "secrets_dir":"/var/lib/nomad/alloc/a/t/secrets"})");
    BOOST_TEST(iso.filesystem);
    BOOST_TEST(iso.pidHost);
    BOOST_TEST(!iso.ipcHost);
    BOOST_TEST(iso.chrootEnv->size() == 2u);
    BOOST_TEST(iso.volumes.at(0).readOnly);
    BOOST_TEST((iso.volumes.at(0).propagation == Propagation::HostToTask));
    BOOST_TEST(iso.secretsSizeBytes == 2048u * 1024u);
    IsolationConfig node;
    node.allowedCaps |= uint64_t{1} << capabilityNumber("NET_ADMIN");
    BOOST_REQUIRE(resolveIsolation(iso, node, "/var/lib/taskscope/tasks-root/a/tasks/t").ok());
    BOOST_TEST(iso.taskDirMade);
    BOOST_TEST((iso.caps & (uint64_t{1} << 12)) != 0u);  // NET_ADMIN added
    BOOST_TEST((iso.caps & 1u) == 0u);                   // CHOWN dropped
    auto args = shimIsolationArgs(iso);
    BOOST_TEST(has(args, "--root"));
    BOOST_TEST(has(args, "/var/lib/taskscope/tasks-root/a/tasks/t"));
    BOOST_TEST(has(args, "ro,host-to-task"));
    BOOST_TEST(has(args, "--no-new-privs"));
    BOOST_TEST(has(args, std::to_string(2048 * 1024)));
    BOOST_TEST(has(args, "--secrets-dir"));
    BOOST_TEST(has(args, "/var/lib/nomad/alloc/a/t/secrets"));
}

BOOST_AUTO_TEST_CASE(default_capabilities_are_nomads) {
    // AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER FSETID KILL MKNOD
    // NET_BIND_SERVICE SETFCAP SETGID SETPCAP SETUID SYS_CHROOT
    BOOST_TEST(defaultCapabilities() == 0xa80405fbULL);
    auto iso = parsed("{}");
    BOOST_REQUIRE(resolveIsolation(iso, IsolationConfig{}, "/t").ok());
    BOOST_TEST(iso.caps == 0xa80405fbULL);
    BOOST_TEST(iso.chrootEnv->size() == 9u);
    BOOST_TEST(has(*iso.chrootEnv, "/run/systemd/resolve"));
}

BOOST_AUTO_TEST_CASE(cap_drop_all) {
    auto iso = parsed(R"({"cap_drop":["ALL"],"cap_add":["KILL"]})");
    BOOST_REQUIRE(resolveIsolation(iso, IsolationConfig{}, "/t").ok());
    BOOST_TEST(iso.caps == (uint64_t{1} << 5));
}

// A task on the host's root: its bounding set cut and no_new_privs, both
// applied by the shim (--cap-bound), where they used to be ignored.
BOOST_AUTO_TEST_CASE(host_root_takes_cap_drop_and_no_new_privs) {
    auto iso = parsed(R"({"filesystem":false,"cap_drop":["ALL"],"no_new_privs":true})");
    BOOST_TEST(!iso.filesystem);
    BOOST_REQUIRE(resolveIsolation(iso, IsolationConfig{}, "").ok());
    BOOST_TEST(iso.caps == 0u);
    BOOST_TEST((shimIsolationArgs(iso) == std::vector<std::string>{"--cap-bound", "0", "--no-new-privs", "1"}));
    iso = parsed(R"({"filesystem":false,"cap_drop":["NET_RAW"]})");
    BOOST_REQUIRE(resolveIsolation(iso, IsolationConfig{}, "").ok());
    BOOST_TEST((shimIsolationArgs(iso) == std::vector<std::string>{"--cap-bound", "ffffffffffffdfff"}));
    iso = parsed(R"({"filesystem":false})");
    BOOST_REQUIRE(resolveIsolation(iso, IsolationConfig{}, "").ok());
    BOOST_TEST(shimIsolationArgs(iso).empty());
}

BOOST_AUTO_TEST_CASE(capability_outside_allow_list_is_named) {
    auto iso = parsed(R"({"cap_add":["SYS_ADMIN"]})");
    auto r = resolveIsolation(iso, IsolationConfig{}, "/t");
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "InvalidSpec");
    BOOST_TEST(r.error().message.find("SYS_ADMIN") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(given_task_dir_is_not_made) {
    auto iso = parsed(R"({"task_dir":"/srv/tasks/x","alloc_dir":"/srv/alloc"})");
    BOOST_REQUIRE(resolveIsolation(iso, IsolationConfig{}, "/t").ok());
    BOOST_TEST(!iso.taskDirMade);
    BOOST_TEST(iso.taskDir == "/srv/tasks/x");
}

struct Bad {
    const char* iso;
    const char* says;
};
std::ostream& operator<<(std::ostream& o, const Bad& b) { return o << b.iso; }

static const Bad kBad[] = {
    {R"("yes")", "isolation must be an object"},
    {R"({"bogus":1})", "unknown field isolation.bogus"},
    {R"({"task_dir":"rel/dir"})", "absolute path"},
    {R"({"task_dir":"/a/../b"})", "without '..'"},
    {R"({"chroot_env":["/usr/./lib"]})", "without '..'"},
    {R"({"chroot_env":["/"]})", "must not hold /"},
    {R"({"volumes":[{"source":"/a","target":"../b"}]})", "volumes[0].target"},
    {R"({"volumes":[{"source":"/a","target":"/b/../../etc"}]})", "without '..'"},
    {R"({"volumes":[{"source":"/a","target":"/"}]})", "root itself"},
    {R"({"volumes":[{"source":"/a"}]})", "needs a source and a target"},
    {R"({"volumes":[{"source":"/a","target":"/b","read_only":true,"propagation":"bidirectional"}]})",
     "bidirectional volume cannot be read-only"},
    {R"({"volumes":[{"source":"/a","target":"/b","propagation":"rshared"}]})", "propagation must be"},
    {R"({"pid_mode":"container"})", "pid_mode must be"},
    {R"({"cap_add":["NOT_A_CAP"]})", "unknown capability NOT_A_CAP"},
    {R"({"cap_drop":[12]})", "array of capability names"},
    {R"({"secrets_size_kb":1})", "secrets_size_kb"},
    {R"({"secrets_dir":"relative"})", "secrets_dir"},
    // On the host's root only cap_drop and no_new_privs apply: the rest is
    // refused by name, never accepted and ignored (issue 32).
    {R"({"filesystem":false,"cap_add":["KILL"]})", "isolation.cap_add needs \"filesystem\": true"},
    {R"({"filesystem":false,"volumes":[{"source":"/a","target":"/b"}]})", "isolation.volumes needs"},
    {R"({"filesystem":false,"pid_mode":"private"})", "isolation.pid_mode needs"},
    {R"({"filesystem":false,"task_dir":"/srv/t"})", "isolation.task_dir needs"},
    {R"({"filesystem":false,"secrets_size_kb":64})", "isolation.secrets_size_kb needs"},
};

BOOST_DATA_TEST_CASE(bad_isolation_is_invalid_spec, bdata::make(kBad), bad) {
    auto s = parseTaskSpec(std::string(R"({"command":"/bin/true","isolation":)") + bad.iso + "}");
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().name == "InvalidSpec");
    BOOST_TEST_INFO(s.error().message);
    BOOST_TEST(s.error().message.find(bad.says) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(clean_paths) {
    BOOST_TEST(isCleanAbsolutePath("/"));
    BOOST_TEST(isCleanAbsolutePath("/usr/share"));
    BOOST_TEST(!isCleanAbsolutePath("/usr/"));
    BOOST_TEST(!isCleanAbsolutePath("//usr"));
    BOOST_TEST(!isCleanAbsolutePath("/usr/.."));
    BOOST_TEST(!isCleanAbsolutePath("usr"));
    BOOST_TEST(!isCleanAbsolutePath(""));
}

// issue 47: the score goes to every task (0 unless asked), each ulimit as
// --rlimit with its RLIMIT_* number, devices only to an isolated task.
BOOST_AUTO_TEST_CASE(limits_and_devices_as_shim_options) {
    auto s = parseTaskSpec(R"({"command":"/bin/true","ulimits":{"nofile":"10:20","core":"unlimited"},
        "devices":[{"host_path":"/dev/fuse"},{"host_path":"/dev/nvidia0","task_path":"/dev/gpu"}]})");
    BOOST_REQUIRE(s.ok());
    const auto limits = shimLimitArgs(*s);
    const std::vector<std::string> expected = {"--oom-score-adj", "0",        "--rlimit", "4",  "unlimited",
                                               "unlimited",       "--rlimit", "7",        "10", "20"};
    BOOST_TEST(limits == expected, boost::test_tools::per_element());
    BOOST_TEST(shimDeviceArgs(*s).empty());  // on the host's root: its /dev is the host's
    s->isolation.filesystem = true;
    const std::vector<std::string> devices = {"--device", "/dev/fuse",    "/dev/fuse",
                                              "--device", "/dev/nvidia0", "/dev/gpu"};
    BOOST_TEST(shimDeviceArgs(*s) == devices, boost::test_tools::per_element());
    s->oomScoreAdj = -17;
    BOOST_TEST(shimLimitArgs(*s)[1] == "-17");
}

// issue 47: resolv.conf and hosts words, only for an isolated task.
BOOST_AUTO_TEST_CASE(network_files_as_shim_options) {
    auto s = parseTaskSpec(R"({"command":"/bin/true","dns":{"searches":["svc.example"]},
        "hosts":{"hostname":"web","address":"10.1.2.3"}})");
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(shimNetFileArgs(*s, "nameserver 192.0.2.1\n").empty());  // on the host's root: the host's files
    s->isolation.filesystem = true;
    const std::vector<std::string> expected = {"--dns-server", "192.0.2.1", "--dns-search", "svc.example",
                                               "--hosts",      "web",       "10.1.2.3"};
    BOOST_TEST(shimNetFileArgs(*s, "nameserver 192.0.2.1\n") == expected, boost::test_tools::per_element());
}
