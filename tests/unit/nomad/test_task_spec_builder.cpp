#define BOOST_TEST_MODULE task_spec_builder
#include <boost/test/unit_test.hpp>
#include <msgpack.hpp>

#include <filesystem>

#include "nomad/task_spec_builder.hpp"
#include "spec/task_spec.hpp"

namespace pb = hashicorp::nomad::plugins::drivers::proto;
using namespace taskscope::nomad;

namespace {

std::string config(const std::string& command, const std::vector<std::string>& args, bool extra = false) {
    msgpack::sbuffer b;
    msgpack::packer<msgpack::sbuffer> pk(b);
    pk.pack_map(extra ? 3 : 2);
    pk.pack(std::string("command"));
    pk.pack(command);
    pk.pack(std::string("args"));
    pk.pack(args);
    if (extra) {
        pk.pack(std::string("image"));
        pk.pack(std::string("x"));
    }
    return std::string(b.data(), b.size());
}

// A config block with `isolation` set.
std::string configIsolation(const std::string& command, const std::string& isolation) {
    msgpack::sbuffer b;
    msgpack::packer<msgpack::sbuffer> pk(b);
    pk.pack_map(2);
    pk.pack(std::string("command"));
    pk.pack(command);
    pk.pack(std::string("isolation"));
    pk.pack(isolation);
    return std::string(b.data(), b.size());
}

DriverConfig noneByDefault() {
    DriverConfig c;
    c.defaultIsolation = FsMode::None;
    return c;
}
const DriverConfig kNone = noneByDefault();

// A config block as Nomad sends it (a msgpack map; nlohmann's encoding of
// the same JSON is what go-cty's is for these types).
std::string block(const nlohmann::json& j) {
    const auto bytes = nlohmann::json::to_msgpack(j);
    return std::string(bytes.begin(), bytes.end());
}

pb::TaskConfig task() {
    pb::TaskConfig t;
    t.set_id("a1/web/xyz");
    t.set_alloc_id("a1");
    t.set_name("web");
    t.set_msgpack_driver_config(config("/bin/sleep", {"60"}));
    (*t.mutable_env())["NOMAD_TASK_NAME"] = "web";
    t.set_user("nobody");
    t.set_alloc_dir("/var/lib/nomad/alloc/a1");
    t.set_stdout_path("/var/lib/nomad/alloc/a1/alloc/logs/.web.stdout.fifo");
    t.set_stderr_path("/var/lib/nomad/alloc/a1/alloc/logs/.web.stderr.fifo");
    auto* r = t.mutable_resources();
    r->mutable_allocated_resources()->mutable_memory()->set_memory_mb(256);
    r->mutable_allocated_resources()->mutable_memory()->set_memory_max_mb(512);
    r->mutable_allocated_resources()->mutable_cpu()->set_cpu_shares(500);
    r->mutable_linux_resources()->set_cpuset_cpus("2-3");
    return t;
}

}  // namespace

BOOST_AUTO_TEST_CASE(full_task) {
    auto spec = buildTaskSpec(task(), kNone);
    BOOST_REQUIRE(spec);
    const auto& s = *spec;
    BOOST_TEST(s["command"].get<std::string>() == "/bin/sleep");
    BOOST_TEST(s["args"][0].get<std::string>() == "60");
    BOOST_TEST(s["env"]["NOMAD_TASK_NAME"].get<std::string>() == "web");
    BOOST_TEST(s["user"].get<std::string>() == "nobody");
    BOOST_TEST(s["cwd"].get<std::string>() == "/var/lib/nomad/alloc/a1/web");
    BOOST_TEST(s["stdout_path"].get<std::string>() == "/var/lib/nomad/alloc/a1/alloc/logs/.web.stdout.fifo");
    BOOST_TEST(s["stderr_path"].get<std::string>() == "/var/lib/nomad/alloc/a1/alloc/logs/.web.stderr.fifo");
    BOOST_TEST(s["resources"]["memory_mb"].get<int>() == 256);
    BOOST_TEST(s["resources"]["memory_max_mb"].get<int>() == 512);
    BOOST_TEST(s["resources"]["cpu_shares"].get<int>() == 500);
    BOOST_TEST(s["resources"]["cpuset"].get<std::string>() == "2-3");
}

BOOST_AUTO_TEST_CASE(minimal_task) {
    pb::TaskConfig t;
    t.set_alloc_id("a");
    t.set_name("b");
    t.set_msgpack_driver_config(config("true", {}));
    auto spec = buildTaskSpec(t);
    BOOST_REQUIRE(spec);
    BOOST_TEST(spec->dump() == R"({"args":[],"command":"true","isolation":{"filesystem":true},"user":"nobody"})");
    spec = buildTaskSpec(t, kNone);
    BOOST_REQUIRE(spec);
    BOOST_TEST(spec->dump() == R"({"args":[],"command":"true","isolation":{"filesystem":false},"user":"root"})");
}

// log_journal (issue 59): carried into the spec as the job says it, with
// Nomad's log fifos or without.
BOOST_AUTO_TEST_CASE(log_journal_reaches_the_spec) {
    pb::TaskConfig t;
    t.set_alloc_id("a");
    t.set_name("b");
    t.set_msgpack_driver_config(block({{"command", "true"}, {"log_journal", true}}));
    auto spec = buildTaskSpec(t, kNone);
    BOOST_REQUIRE_MESSAGE(spec, (spec ? "" : spec.error().message));
    BOOST_TEST((*spec)["log_journal"].get<bool>());
    auto parsed = taskscope::spec::taskSpecFromJson(*spec);
    BOOST_REQUIRE(parsed);
    BOOST_TEST((parsed->logJournal == true));

    t.set_msgpack_driver_config(block({{"command", "true"}}));
    spec = buildTaskSpec(t, kNone);
    BOOST_REQUIRE(spec);
    BOOST_TEST(!spec->contains("log_journal"));  // the node's default

    auto logged = task();  // Nomad's log fifos
    logged.set_msgpack_driver_config(block({{"command", "/bin/sleep"}, {"log_journal", false}}));
    spec = buildTaskSpec(logged, kNone);
    BOOST_REQUIRE_MESSAGE(spec, (spec ? "" : spec.error().message));
    BOOST_TEST(!(*spec)["log_journal"].get<bool>());
    // With Nomad's fifos too: the streamer forwards the output to them and
    // copies it to the journal on the way; the manager takes the spec.
    logged.set_msgpack_driver_config(block({{"command", "/bin/sleep"}, {"log_journal", true}}));
    spec = buildTaskSpec(logged, kNone);
    BOOST_REQUIRE_MESSAGE(spec, (spec ? "" : spec.error().message));
    BOOST_TEST((*spec)["log_journal"].get<bool>());
    BOOST_TEST(!(*spec)["stdout_path"].get<std::string>().empty());
    parsed = taskscope::spec::taskSpecFromJson(*spec);
    BOOST_REQUIRE_MESSAGE(parsed, (parsed ? "" : parsed.error().message));
    BOOST_TEST((parsed->logJournal == true));
}

// The default: Nomad's allocation layout as the task's own root.
BOOST_AUTO_TEST_CASE(chroot_maps_nomad_dirs_and_mounts) {
    auto t = task();
    auto* m = t.add_mounts();
    m->set_host_path("/srv/data");
    m->set_task_path("/data");
    m->set_readonly(true);
    auto* m2 = t.add_mounts();
    m2->set_host_path("/srv/shared");
    m2->set_task_path("/shared");
    m2->set_propagation_mode("host-to-task");
    auto spec = buildTaskSpec(t);
    BOOST_REQUIRE(spec);
    const auto& iso = (*spec)["isolation"];
    BOOST_TEST(iso["filesystem"].get<bool>());
    BOOST_TEST(iso["task_dir"].get<std::string>() == "/var/lib/nomad/alloc/a1/web");
    BOOST_TEST(iso["alloc_dir"].get<std::string>() == "/var/lib/nomad/alloc/a1/alloc");
    BOOST_TEST(iso["secrets_dir"].get<std::string>() == "/var/lib/nomad/alloc/a1/web/secrets");
    BOOST_REQUIRE(iso["volumes"].size() == 2);
    BOOST_TEST(iso["volumes"][0].dump() == R"({"read_only":true,"source":"/srv/data","target":"/data"})");
    BOOST_TEST(iso["volumes"][1].dump() ==
               R"({"propagation":"host-to-task","read_only":false,"source":"/srv/shared","target":"/shared"})");
    BOOST_TEST(!spec->contains("cwd"));  // the root's /
    // Nomad's env already names the in-root paths.
    BOOST_TEST(!spec->contains("network_namespace"));
}

BOOST_AUTO_TEST_CASE(task_option_overrides_driver_default) {
    auto t = task();
    t.set_msgpack_driver_config(configIsolation("/bin/true", "none"));
    auto spec = buildTaskSpec(t);
    BOOST_REQUIRE(spec);
    // Said explicitly, so a node's default_isolated cannot override the job.
    BOOST_TEST((*spec)["isolation"].dump() == R"({"filesystem":false})");
    t.set_msgpack_driver_config(configIsolation("/bin/true", "chroot"));
    spec = buildTaskSpec(t, kNone);
    BOOST_REQUIRE(spec);
    BOOST_TEST((*spec)["isolation"]["filesystem"].get<bool>());
    t.set_msgpack_driver_config(configIsolation("/bin/true", "vm"));
    auto bad = buildTaskSpec(t);
    BOOST_REQUIRE(!bad);
    BOOST_TEST(bad.error().name == "InvalidConfig");
    BOOST_TEST(!parseFsMode("Chroot"));
}

// On the host's root the in-root paths Nomad wrote would point nowhere.
BOOST_AUTO_TEST_CASE(none_rewrites_nomad_dirs_and_refuses_mounts) {
    auto t = task();
    (*t.mutable_env())["NOMAD_ALLOC_DIR"] = "/alloc";
    (*t.mutable_env())["NOMAD_TASK_DIR"] = "/local";
    (*t.mutable_env())["NOMAD_SECRETS_DIR"] = "/secrets";
    auto spec = buildTaskSpec(t, kNone);
    BOOST_REQUIRE(spec);
    BOOST_TEST((*spec)["env"]["NOMAD_ALLOC_DIR"].get<std::string>() == "/var/lib/nomad/alloc/a1/alloc");
    BOOST_TEST((*spec)["env"]["NOMAD_TASK_DIR"].get<std::string>() == "/var/lib/nomad/alloc/a1/web/local");
    BOOST_TEST((*spec)["env"]["NOMAD_SECRETS_DIR"].get<std::string>() == "/var/lib/nomad/alloc/a1/web/secrets");
    auto* m = t.add_mounts();
    m->set_host_path("/srv");
    m->set_task_path("/srv");
    auto bad = buildTaskSpec(t, kNone);
    BOOST_REQUIRE(!bad);
    BOOST_TEST(bad.error().name == "InvalidConfig");
}

BOOST_AUTO_TEST_CASE(devices_and_bad_mounts) {
    auto t = task();
    auto* d = t.add_devices();
    d->set_host_path("/dev/nvidia0");
    d->set_task_path("/dev/gpu0");
    d->set_cgroup_permissions("rw");
    // Isolated: bound at its task path (and allowed in its scope).
    auto chroot = buildTaskSpec(t);
    BOOST_REQUIRE_MESSAGE(chroot.ok(), (chroot.ok() ? std::string() : chroot.error().message));
    const auto& dev = (*chroot)["devices"][0];
    BOOST_TEST(dev["host_path"].get<std::string>() == "/dev/nvidia0");
    BOOST_TEST(dev["task_path"].get<std::string>() == "/dev/gpu0");
    BOOST_TEST(dev["permissions"].get<std::string>() == "rw");
    // On the host's root only at its host path.
    auto moved = buildTaskSpec(t, kNone);
    BOOST_REQUIRE(!moved);
    BOOST_TEST(moved.error().message.find("host path") != std::string::npos);
    d->set_task_path("");           // Nomad's default: the host path
    d->set_cgroup_permissions("");  // docker's default: rwm
    auto host = buildTaskSpec(t, kNone);
    BOOST_REQUIRE(host.ok());
    BOOST_TEST((*host)["devices"][0]["host_path"].get<std::string>() == "/dev/nvidia0");
    BOOST_TEST(!(*host)["devices"][0].contains("permissions"));  // the default, rwm
    d->set_cgroup_permissions("rwx");
    auto perms = buildTaskSpec(t, kNone);
    BOOST_REQUIRE(!perms);
    BOOST_TEST(perms.error().message.find("rwx") != std::string::npos);
    d->set_cgroup_permissions("r");
    d->set_host_path("/etc/hostname");  // not under /dev
    BOOST_TEST(!buildTaskSpec(t, kNone));
    BOOST_TEST(!buildTaskSpec(t));
    auto u = task();
    auto* m = u.add_mounts();
    m->set_host_path("/srv");
    m->set_task_path("/srv");
    m->set_propagation_mode("sideways");
    BOOST_TEST(!buildTaskSpec(u));
}

BOOST_AUTO_TEST_CASE(group_network_joins_the_allocation_namespace) {
    auto t = task();
    t.mutable_network_isolation_spec()->set_mode(pb::NetworkIsolationSpec::GROUP);
    t.mutable_network_isolation_spec()->set_path("/run/netns/a1");
    auto spec = buildTaskSpec(t);
    BOOST_REQUIRE(spec);
    BOOST_TEST((*spec)["network_namespace"].get<std::string>() == "alloc");
    BOOST_TEST(allocNetnsPath("a1") == "/run/netns/a1");
    t.mutable_network_isolation_spec()->set_path("/run/netns/someone-else");
    auto other = buildTaskSpec(t);
    BOOST_REQUIRE(!other);
    BOOST_TEST(other.error().name == "InvalidConfig");
    t.mutable_network_isolation_spec()->set_mode(pb::NetworkIsolationSpec::TASK);
    t.mutable_network_isolation_spec()->set_path("/run/netns/a1");
    BOOST_TEST(!buildTaskSpec(t));
    t.mutable_network_isolation_spec()->set_mode(pb::NetworkIsolationSpec::HOST);
    t.mutable_network_isolation_spec()->set_path("");
    spec = buildTaskSpec(t);
    BOOST_REQUIRE(spec);
    BOOST_TEST(!spec->contains("network_namespace"));
}

BOOST_AUTO_TEST_CASE(shares_clamped_to_taskscope_range) {
    auto t = task();
    t.mutable_resources()->mutable_allocated_resources()->mutable_cpu()->set_cpu_shares(1);
    BOOST_TEST((*buildTaskSpec(t))["resources"]["cpu_shares"].get<int>() == 2);
    t.mutable_resources()->mutable_allocated_resources()->mutable_cpu()->set_cpu_shares(1000000);
    BOOST_TEST((*buildTaskSpec(t))["resources"]["cpu_shares"].get<int>() == 262144);
}

BOOST_AUTO_TEST_CASE(bad_configs_are_invalid) {
    auto t = task();
    t.set_msgpack_driver_config(config("/bin/true", {}, true));
    auto unknown = buildTaskSpec(t);
    BOOST_REQUIRE(!unknown);
    BOOST_TEST(unknown.error().name == "InvalidConfig");
    t.set_msgpack_driver_config(config("", {}));
    BOOST_TEST(!buildTaskSpec(t));
    t.set_msgpack_driver_config("\xc1");
    BOOST_TEST(!buildTaskSpec(t));
}

BOOST_AUTO_TEST_CASE(key_and_driver_state_round_trip) {
    auto key = taskKey(task());
    BOOST_REQUIRE(key);
    BOOST_TEST(key->allocId == "a1");
    BOOST_TEST(key->task == "web");
    auto back = decodeDriverState(encodeDriverState(*key));
    BOOST_REQUIRE(back);
    BOOST_TEST(back->allocId == "a1");
    BOOST_TEST(back->task == "web");
    BOOST_TEST(!decodeDriverState("not json"));
    BOOST_TEST(!decodeDriverState("{\"alloc_id\":1}"));
    pb::TaskConfig noAlloc;
    noAlloc.set_name("x");
    BOOST_TEST(!taskKey(noAlloc));
}

// Nomad's data_dir behind an operator's symlink: the driver names the real
// directories, which the manager takes (it refuses a path through a link).
BOOST_AUTO_TEST_CASE(alloc_dir_behind_a_symlink_is_named_by_its_real_path) {
    char tmpl[] = "/tmp/spec-builder-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(tmpl));
    const std::string base = tmpl;
    std::filesystem::create_directories(base + "/data/alloc/a1");
    std::filesystem::create_directory_symlink(base + "/data", base + "/nomad");
    auto t = task();
    t.set_alloc_dir(base + "/nomad/alloc/a1");
    t.set_msgpack_driver_config(configIsolation("/bin/true", "chroot"));
    auto spec = buildTaskSpec(t);
    BOOST_REQUIRE(spec);
    BOOST_TEST((*spec)["isolation"]["task_dir"].get<std::string>() == base + "/data/alloc/a1/web");
    BOOST_TEST((*spec)["isolation"]["alloc_dir"].get<std::string>() == base + "/data/alloc/a1/alloc");
    std::filesystem::remove_all(base);
}

// exec's keys under the default isolation (exec's own meaning).
BOOST_AUTO_TEST_CASE(exec_keys_in_the_tasks_root) {
    auto t = task();
    t.set_msgpack_driver_config(block({{"command", "/bin/sh"},
                                       {"pid_mode", "host"},
                                       {"ipc_mode", nullptr},
                                       {"cap_add", {"net_raw"}},
                                       {"cap_drop", {"chown", "net_raw"}},
                                       {"work_dir", "/local"}}));
    DriverConfig d;
    d.allowCaps |= CapSet{1} << 13;  // NET_RAW
    d.defaultIpcHost = true;
    auto spec = buildTaskSpec(t, d);
    BOOST_REQUIRE_MESSAGE(spec, (spec ? "" : spec.error().message));
    const auto& iso = (*spec)["isolation"];
    BOOST_TEST(iso["pid_mode"].get<std::string>() == "host");
    BOOST_TEST(iso["ipc_mode"].get<std::string>() == "host");  // the plugin's default_ipc_mode
    BOOST_TEST(iso["cap_add"].dump() == R"(["NET_RAW"])");
    BOOST_TEST(iso["cap_drop"].dump() == R"(["CHOWN"])");  // cap_add wins over cap_drop, as in exec
    BOOST_TEST((*spec)["cwd"].get<std::string>() == "/local");
    // Defaults: private namespaces, exec's default set (nothing to drop).
    t.set_msgpack_driver_config(block({{"command", "/bin/sh"}}));
    spec = buildTaskSpec(t);
    BOOST_REQUIRE(spec);
    BOOST_TEST(!(*spec)["isolation"].contains("pid_mode"));
    BOOST_TEST(!(*spec)["isolation"].contains("cap_drop"));
    // allow_caps narrower than exec's defaults: the rest dropped.
    d = DriverConfig{};
    d.allowCaps = CapSet{1} << 0;  // CHOWN
    spec = buildTaskSpec(t, d);
    BOOST_REQUIRE(spec);
    BOOST_TEST((*spec)["isolation"]["cap_drop"].size() == 12u);
    // cap_drop = ["all"], cap_add within allow_caps.
    t.set_msgpack_driver_config(block({{"command", "/bin/sh"}, {"cap_drop", {"ALL"}}, {"cap_add", {"chown"}}}));
    spec = buildTaskSpec(t);
    BOOST_REQUIRE(spec);
    BOOST_TEST((*spec)["isolation"]["cap_drop"].dump() == R"(["ALL"])");
    BOOST_TEST((*spec)["isolation"]["cap_add"].dump() == R"(["CHOWN"])");
    // cap_add outside allow_caps: exec's "driver does not allow".
    t.set_msgpack_driver_config(block({{"command", "/bin/sh"}, {"cap_add", {"sys_admin"}}}));
    auto bad = buildTaskSpec(t);
    BOOST_REQUIRE(!bad);
    BOOST_TEST(bad.error().message.find("allow_caps does not allow SYS_ADMIN") != std::string::npos,
               bad.error().message);
}

// raw_exec's keys on the host's root.
BOOST_AUTO_TEST_CASE(raw_exec_keys_on_the_host_root) {
    auto t = task();
    (*t.mutable_env())["AWS_SECRET"] = "s";
    (*t.mutable_env())["DB_PASSWORD"] = "p";
    (*t.mutable_env())["NOMAD_SECRETS_DIR"] = "/secrets";
    (*t.mutable_env())["NOMAD_UNIX_ADDR"] = "unix:///secrets/api.sock";
    t.set_msgpack_driver_config(block({{"command", "/usr/bin/env"},
                                       {"work_dir", "/srv"},
                                       {"denied_envvars", {"*_PASSWORD"}},
                                       {"cap_drop", {"net_raw"}},
                                       {"cgroup_v2_override", nullptr}}));
    DriverConfig d = kNone;
    d.deniedEnvvars = {"AWS_*"};
    auto spec = buildTaskSpec(t, d);
    BOOST_REQUIRE_MESSAGE(spec, (spec ? "" : spec.error().message));
    const auto& env = (*spec)["env"];
    BOOST_TEST(!env.contains("AWS_SECRET"));
    BOOST_TEST(!env.contains("DB_PASSWORD"));
    BOOST_TEST(env["NOMAD_UNIX_ADDR"].get<std::string>() == "unix:///var/lib/nomad/alloc/a1/web/secrets/api.sock");
    BOOST_TEST((*spec)["cwd"].get<std::string>() == "/srv");
    BOOST_TEST((*spec)["isolation"].dump() == R"({"cap_drop":["NET_RAW"],"filesystem":false})");
    // What needs a root of the task's own, refused by key.
    const std::pair<const char*, nlohmann::json> refusals[] = {
        {"pid_mode", "private"}, {"ipc_mode", "private"}, {"cap_add", nlohmann::json::array({"chown"})}};
    for (const auto& [key, value] : refusals) {
        t.set_msgpack_driver_config(block({{"command", "/bin/true"}, {key, value}}));
        auto bad = buildTaskSpec(t, kNone);
        BOOST_REQUIRE(!bad);
        BOOST_TEST(bad.error().message.find(std::string("config.") + key) == 0u, bad.error().message);
    }
    t.set_msgpack_driver_config(block({{"command", "/bin/true"}, {"pid_mode", "host"}}));
    BOOST_TEST(buildTaskSpec(t, kNone).ok());
}

BOOST_AUTO_TEST_CASE(cgroup_overrides_and_no_pivot_root_are_refused_with_the_reason) {
    auto t = task();
    t.set_msgpack_driver_config(block({{"command", "/bin/true"}, {"cgroup_v2_override", "custom.slice/x.scope"}}));
    auto bad = buildTaskSpec(t, kNone);
    BOOST_REQUIRE(!bad);
    BOOST_TEST(bad.error().message.find("config.cgroup_v2_override") == 0u);
    BOOST_TEST(bad.error().message.find("scope") != std::string::npos);
    t.set_msgpack_driver_config(
        block({{"command", "/bin/true"}, {"cgroup_v1_override", {nlohmann::json{{"pids", "custom"}}}}}));
    bad = buildTaskSpec(t, kNone);
    BOOST_REQUIRE(!bad);
    BOOST_TEST(bad.error().message.find("config.cgroup_v1_override") == 0u);
    DriverConfig d;
    d.noPivotRoot = true;
    t.set_msgpack_driver_config(block({{"command", "/bin/true"}}));
    bad = buildTaskSpec(t, d);
    BOOST_REQUIRE(!bad);
    BOOST_TEST(bad.error().message.find("no_pivot_root") != std::string::npos);
    d.defaultIsolation = FsMode::None;  // nothing to pivot into
    BOOST_TEST(buildTaskSpec(t, d).ok());
}

// Nomad's dynamic workload users (helper/users/dynamic): "nomad-<id>".
BOOST_AUTO_TEST_CASE(users) {
    auto t = task();
    t.set_user("nomad-80001");
    auto spec = buildTaskSpec(t);
    BOOST_REQUIRE(spec);
    BOOST_TEST((*spec)["user"].get<std::string>() == "80001");
    BOOST_TEST((*spec)["group"].get<std::string>() == "80001");
    for (const char* name : {"nomad-", "nomad-x1", "nomad-2147483648", "nomad-99999999999", "xnomad-1"}) {
        t.set_user(name);
        spec = buildTaskSpec(t);
        BOOST_REQUIRE(spec);
        BOOST_TEST((*spec)["user"].get<std::string>() == name);  // a name like any other
        BOOST_TEST(!spec->contains("group"));
    }
    t.set_user("");  // dynamic users off: exec's nobody, raw_exec's root
    spec = buildTaskSpec(t);
    BOOST_REQUIRE(spec);
    BOOST_TEST((*spec)["user"].get<std::string>() == "nobody");
    spec = buildTaskSpec(t, kNone);
    BOOST_REQUIRE(spec);
    BOOST_TEST((*spec)["user"].get<std::string>() == "root");
    DriverConfig d;
    d.deniedHostUids = *taskscope::spec::IdRanges::parse("0,10-20", "denied_host_uids");
    d.deniedHostGids = *taskscope::spec::IdRanges::parse("0", "denied_host_gids");
    spec = buildTaskSpec(t, d);
    BOOST_REQUIRE(spec);
    BOOST_TEST((*spec)["denied_uids"].get<std::string>() == "0,10-20");
    BOOST_TEST((*spec)["denied_gids"].get<std::string>() == "0");
}

// Nomad's three memory shapes (drivers/shared/executor/utils.go memoryLimits).
BOOST_AUTO_TEST_CASE(memory_shapes) {
    auto t = task();
    auto* mem = t.mutable_resources()->mutable_allocated_resources()->mutable_memory();
    mem->set_memory_mb(256);
    mem->set_memory_max_mb(-1);  // no hard limit, memory reserved
    auto spec = buildTaskSpec(t);
    BOOST_REQUIRE(spec);
    BOOST_TEST((*spec)["resources"]["memory_mb"].get<int>() == 256);
    BOOST_TEST((*spec)["resources"]["memory_max_mb"].get<int>() == -1);
    mem->set_memory_max_mb(512);  // both
    spec = buildTaskSpec(t);
    BOOST_TEST((*spec)["resources"]["memory_max_mb"].get<int>() == 512);
    mem->set_memory_max_mb(0);  // memory is the hard limit
    spec = buildTaskSpec(t);
    BOOST_TEST(!(*spec)["resources"].contains("memory_max_mb"));
    mem->set_memory_max_mb(256);
    spec = buildTaskSpec(t);
    BOOST_TEST(!(*spec)["resources"].contains("memory_max_mb"));
}

// The node's keys add to Nomad's resources, never replace them.
BOOST_AUTO_TEST_CASE(node_keys_beside_nomads_resources) {
    auto t = task();
    t.set_msgpack_driver_config(block({{"command", "/bin/sleep"},
                                       {"io_weight", 300},
                                       {"oom_score_adj", 250},
                                       {"ulimit", {{"nofile", "4096:8192"}}}}));
    auto spec = buildTaskSpec(t, kNone);
    BOOST_REQUIRE_MESSAGE(spec, (spec ? "" : spec.error().message));
    const auto& s = *spec;
    BOOST_TEST(s["resources"]["io_weight"].get<int>() == 300);
    BOOST_TEST(s["resources"]["memory_mb"].get<int>() == 256);
    BOOST_TEST(s["resources"]["cpu_shares"].get<int>() == 500);
    BOOST_TEST(s["oom_score_adj"].get<int>() == 250);
    BOOST_TEST(s.contains("ulimits"));
}
