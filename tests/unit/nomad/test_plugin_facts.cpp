#define BOOST_TEST_MODULE plugin_facts
#include <boost/test/unit_test.hpp>

#include <vector>

#include "nomad/node_task_config.hpp"
#include "nomad/plugin_facts.hpp"

namespace pb = hashicorp::nomad::plugins::drivers::proto;
using namespace taskscope::nomad;

// The line go-plugin's client parses (go-plugin client.go Start): core
// protocol 1, Nomad's app protocol 2 (plugins/base/plugin.go), unix,
// the socket, grpc, and an empty server certificate (no AutoMTLS).
BOOST_AUTO_TEST_CASE(handshake_is_nomads) {
    BOOST_TEST(handshakeLine("/tmp/d/plugin.sock", false) == "1|2|unix|/tmp/d/plugin.sock|grpc|");
    // A client that asks about broker multiplexing gets the 7th field: no.
    BOOST_TEST(handshakeLine("/tmp/d/plugin.sock", true) == "1|2|unix|/tmp/d/plugin.sock|grpc||false");
}

BOOST_AUTO_TEST_CASE(client_versions) {
    BOOST_TEST(clientAcceptsAppVersion("2"));
    BOOST_TEST(clientAcceptsAppVersion("1,2"));
    BOOST_TEST(clientAcceptsAppVersion(""));  // an old client sends none
    BOOST_TEST(!clientAcceptsAppVersion("1"));
    BOOST_TEST(!clientAcceptsAppVersion("12,20"));
}

BOOST_AUTO_TEST_CASE(api_version_is_nomads_spelling) {
    // plugins/drivers/versions.go ApiVersion010.
    BOOST_TEST(std::string(kPluginApiVersion) == "v0.1.0");
}

// Every DriverCapabilities field, with the value docs/nomad-driver.md gives.
BOOST_AUTO_TEST_CASE(every_capability) {
    pb::DriverCapabilities c;
    fillCapabilities(c);
    BOOST_TEST(c.send_signals());
    BOOST_TEST(c.exec());
    BOOST_TEST(c.fs_isolation() == pb::DriverCapabilities::IMAGE);
    BOOST_TEST_REQUIRE(c.network_isolation_modes_size() == 2);
    BOOST_TEST(c.network_isolation_modes(0) == pb::NetworkIsolationSpec::HOST);
    BOOST_TEST(c.network_isolation_modes(1) == pb::NetworkIsolationSpec::GROUP);
    BOOST_TEST(c.must_create_network());
    BOOST_TEST(c.mount_configs() == pb::DriverCapabilities::ANY_MOUNTS);
    BOOST_TEST(!c.disable_log_collection());
    BOOST_TEST(c.dynamic_workload_users());  // the plugin block's default
    pb::DriverCapabilities off;
    fillCapabilities(off, false);
    BOOST_TEST(!off.dynamic_workload_users());
    // Field 7 (remote_tasks) is reserved in current Nomad: nothing sent there.
    const auto* field = pb::DriverCapabilities::descriptor()->FindFieldByNumber(7);
    BOOST_TEST(field == nullptr);
    BOOST_TEST(pb::DriverCapabilities::descriptor()->FindFieldByNumber(9)->name() == "dynamic_workload_users");
}

// The schemas' names and types, as Nomad's hclspec conversion reads them.
BOOST_AUTO_TEST_CASE(schemas) {
    const auto cfg = configSchema();
    BOOST_TEST_REQUIRE(cfg.has_object());
    const auto& a = cfg.object().attributes();
    BOOST_TEST(a.at("enabled").default_().default_().literal().value() == "true");
    BOOST_TEST(a.at("default_isolation").default_().default_().literal().value() == "\"chroot\"");
    BOOST_TEST(a.at("default_isolation").default_().primary().attr().name() == "default_isolation");
    const auto task = taskConfigSchema();
    BOOST_TEST(task.object().attributes().at("command").attr().required());
    BOOST_TEST(task.object().attributes().at("args").attr().type() == "list(string)");
    // issue 47's node keys
    BOOST_TEST(task.object().attributes().at("ulimit").attr().type() == "map(string)");
    BOOST_TEST(task.object().attributes().at("oom_score_adj").attr().type() == "number");
    BOOST_TEST(task.object().attributes().at("device_read_iops").attr().type() == "map(number)");
}

// A superset of exec's and raw_exec's schemas at Nomad aa026cc99cfb
// (drivers/exec/driver.go, drivers/rawexec/driver.go configSpec and
// taskConfigSpec): every key, its type and its default. oom_score_adj
// (raw_exec) is the node side's (issue 47 item 7) and not listed here.
BOOST_AUTO_TEST_CASE(schemas_are_supersets_of_exec_and_raw_exec) {
    struct Want {
        const char* name;
        const char* type;
        const char* literal;  // nullptr: no default
    };
    const Want plugin[] = {
        {"no_pivot_root", "bool", "false"},
        {"default_pid_mode", "string", "\"private\""},
        {"default_ipc_mode", "string", "\"private\""},
        {"allow_caps", "list(string)",
         R"(["AUDIT_WRITE","CHOWN","DAC_OVERRIDE","FOWNER","FSETID","KILL","MKNOD","NET_BIND_SERVICE","SETFCAP","SETGID","SETPCAP","SETUID","SYS_CHROOT"])"},
        {"denied_host_uids", "string", nullptr},
        {"denied_host_gids", "string", nullptr},
        {"denied_envvars", "list(string)", nullptr},
        {"enabled", "bool", "true"},  // raw_exec's default is false: taskscope runs once installed
        {"dynamic_workload_users", "bool", "true"},
    };
    const auto cfg = configSchema().object().attributes();
    for (const auto& w : plugin) {
        BOOST_TEST_REQUIRE(cfg.count(w.name) == 1u, w.name);
        const auto& s = cfg.at(w.name);
        const auto& a = w.literal ? s.default_().primary().attr() : s.attr();
        BOOST_TEST(a.type() == w.type, w.name);
        BOOST_TEST(!a.required(), w.name);
        if (w.literal) BOOST_TEST(s.default_().default_().literal().value() == w.literal, w.name);
    }
    const Want task[] = {
        {"command", "string", nullptr},           {"args", "list(string)", nullptr},
        {"pid_mode", "string", nullptr},          {"ipc_mode", "string", nullptr},
        {"cap_add", "list(string)", nullptr},     {"cap_drop", "list(string)", nullptr},
        {"work_dir", "string", nullptr},          {"cgroup_v2_override", "string", nullptr},
        {"cgroup_v1_override", "list(map(string))", nullptr}, {"denied_envvars", "list(string)", nullptr},
        {"isolation", "string", nullptr},         {"log_journal", "bool", nullptr},
    };
    const auto t = taskConfigSchema().object().attributes();
    for (const auto& w : task) {
        BOOST_TEST_REQUIRE(t.count(w.name) == 1u, w.name);
        BOOST_TEST(t.at(w.name).attr().type() == w.type, w.name);
        BOOST_TEST(t.at(w.name).attr().required() == (std::string(w.name) == "command"), w.name);
    }
    for (const auto& k : nodeTaskKeys()) {
        BOOST_TEST_REQUIRE(t.count(k.name) == 1u, k.name);
        BOOST_TEST(t.at(k.name).attr().type() == k.hclType, k.name);
    }
    BOOST_TEST(t.size() == std::size(task) + nodeTaskKeys().size());
    BOOST_TEST(cfg.size() == std::size(plugin) + 1);  // and default_isolation
}

// The schema Nomad sees, pinned key by key and block by block: every key
// (and no other), its HCL type, whether it is required and its default
// literal, written out here rather than read from the driver's own tables,
// so that a change to a table that changes what Nomad decodes fails here.
namespace {

struct Pinned {
    const char* name;
    const char* type;
    bool required;
    const char* literal;  // nullptr: no default
};

void checkPinned(const hashicorp::nomad::plugins::shared::hclspec::Spec& schema, const std::vector<Pinned>& want) {
    BOOST_TEST_REQUIRE(schema.has_object());
    const auto& attrs = schema.object().attributes();
    BOOST_TEST(attrs.size() == want.size());
    for (const auto& w : want) {
        BOOST_TEST_REQUIRE(attrs.count(w.name) == 1u, w.name);
        const auto& s = attrs.at(w.name);
        BOOST_TEST(s.has_default_() == (w.literal != nullptr), w.name);
        const auto& a = w.literal ? s.default_().primary().attr() : s.attr();
        BOOST_TEST(a.name() == w.name);
        BOOST_TEST(a.type() == w.type, w.name);
        BOOST_TEST(a.required() == w.required, w.name);
        if (w.literal) {
            BOOST_TEST(s.default_().default_().literal().value() == w.literal, w.name);
            BOOST_TEST(!s.default_().primary().has_default_(), w.name);
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(plugin_block_schema_is_pinned) {
    checkPinned(
        configSchema(),
        {
            {"enabled", "bool", false, "true"},
            {"no_pivot_root", "bool", false, "false"},
            {"default_pid_mode", "string", false, "\"private\""},
            {"default_ipc_mode", "string", false, "\"private\""},
            {"allow_caps", "list(string)", false,
             R"(["AUDIT_WRITE","CHOWN","DAC_OVERRIDE","FOWNER","FSETID","KILL","MKNOD","NET_BIND_SERVICE","SETFCAP","SETGID","SETPCAP","SETUID","SYS_CHROOT"])"},
            {"denied_host_uids", "string", false, nullptr},
            {"denied_host_gids", "string", false, nullptr},
            {"denied_envvars", "list(string)", false, nullptr},
            {"default_isolation", "string", false, "\"chroot\""},
            {"dynamic_workload_users", "bool", false, "true"},
        });
}

BOOST_AUTO_TEST_CASE(task_block_schema_is_pinned) {
    checkPinned(taskConfigSchema(), {
                                        {"command", "string", true, nullptr},
                                        {"args", "list(string)", false, nullptr},
                                        {"work_dir", "string", false, nullptr},
                                        {"pid_mode", "string", false, nullptr},
                                        {"ipc_mode", "string", false, nullptr},
                                        {"cap_add", "list(string)", false, nullptr},
                                        {"cap_drop", "list(string)", false, nullptr},
                                        {"cgroup_v2_override", "string", false, nullptr},
                                        {"cgroup_v1_override", "list(map(string))", false, nullptr},
                                        {"denied_envvars", "list(string)", false, nullptr},
                                        {"isolation", "string", false, nullptr},
                                        {"log_journal", "bool", false, nullptr},  // issue 59
                                        // the node's keys (issue 47)
                                        {"ulimit", "map(string)", false, nullptr},
                                        {"oom_score_adj", "number", false, nullptr},
                                        {"io_weight", "number", false, nullptr},
                                        {"device_read_bps", "map(string)", false, nullptr},
                                        {"device_write_bps", "map(string)", false, nullptr},
                                        {"device_read_iops", "map(number)", false, nullptr},
                                        {"device_write_iops", "map(number)", false, nullptr},
                                    });
}
