#include "nomad/plugin_facts.hpp"

#include <cstdlib>
#include <sstream>

#include "nomad/node_task_config.hpp"

namespace taskscope::nomad {

namespace hcl = hashicorp::nomad::plugins::shared::hclspec;
namespace pb = hashicorp::nomad::plugins::drivers::proto;

namespace {

hcl::Spec attr(const char* name, const char* type, bool required) {
    hcl::Spec s;
    auto* a = s.mutable_attr();
    a->set_name(name);
    a->set_type(type);
    a->set_required(required);
    return s;
}

// A Literal's value is an HCL expression (Nomad parses it with
// hclsyntax.ParseExpression: helper/pluginutils/hclspecutils/dec.go
// decodeLiteralSpec), so a string default is written quoted.
hcl::Spec withDefault(hcl::Spec primary, const char* literal) {
    hcl::Spec s;
    *s.mutable_default_()->mutable_primary() = std::move(primary);
    s.mutable_default_()->mutable_default_()->mutable_literal()->set_value(literal);
    return s;
}

std::string envOr(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

}  // namespace

PluginEnv pluginEnvFromProcess() {
    PluginEnv e;
    e.protocolVersions = envOr("PLUGIN_PROTOCOL_VERSIONS");
    e.socketDir = envOr("PLUGIN_UNIX_SOCKET_DIR");
    e.socketGroup = envOr("PLUGIN_UNIX_SOCKET_GROUP");
    // go-plugin's server appends the 7th field whenever the variable is set
    // at all (server.go: os.Getenv(envMultiplexGRPC) != "").
    e.multiplexAsked = !envOr("PLUGIN_MULTIPLEX_GRPC").empty();
    e.autoMtlsAsked = !envOr("PLUGIN_CLIENT_CERT").empty();
    return e;
}

bool clientAcceptsAppVersion(const std::string& versions) {
    if (versions.empty()) return true;
    std::stringstream in(versions);
    for (std::string v; std::getline(in, v, ',');)
        if (v == std::to_string(kAppProtocolVersion)) return true;
    return false;
}

std::string handshakeLine(const std::string& socketPath, bool multiplexAsked) {
    std::string line = std::to_string(kCoreProtocolVersion) + "|" + std::to_string(kAppProtocolVersion) + "|unix|" +
                       socketPath + "|grpc|";
    if (multiplexAsked) line += "|false";
    return line;
}

hcl::Spec configSchema() {
    hcl::Spec s;
    auto& attrs = *s.mutable_object()->mutable_attributes();
    attrs["enabled"] = withDefault(attr("enabled", "bool", false), "true");
    attrs["default_isolation"] = withDefault(attr("default_isolation", "string", false), "\"chroot\"");
    return s;
}

hcl::Spec taskConfigSchema() {
    hcl::Spec s;
    auto& attrs = *s.mutable_object()->mutable_attributes();
    attrs["command"] = attr("command", "string", true);
    attrs["args"] = attr("args", "list(string)", false);
    attrs["isolation"] = attr("isolation", "string", false);
    // --- the node's keys (issue 47: ulimit, oom_score_adj, IO limits), one
    // table in node_task_config.cpp.
    for (const auto& [name, type] : nodeTaskKeys()) attrs[name] = attr(name, type, false);
    // --- end of the node's keys.
    return s;
}

void fillCapabilities(pb::DriverCapabilities& caps) {
    // SignalTask reaches every process of the task's scope (Manager1.SignalTask).
    caps.set_send_signals(true);
    // ExecTask and ExecTaskStreaming run in the task's cgroup and namespaces
    // (the streamer's Exec1): script checks, templates' change scripts and
    // `nomad alloc exec` work.
    caps.set_exec(true);
    caps.set_fs_isolation(kFsIsolation);  // why: plugin_facts.hpp
    for (auto mode : kNetworkIsolationModes) caps.add_network_isolation_modes(mode);
    // Nomad calls CreateNetwork/DestroyNetwork for a group network
    // (client/allocrunner/network_manager_linux.go): the namespace is
    // taskscope's, so that the manager knows and cleans it up.
    caps.set_must_create_network(true);
    // Mounts are bound into an isolated task's root (isolation = "none"
    // refuses them at start, with a message saying why). NO_MOUNTS would
    // make Nomad refuse every job with a volume_mount
    // (client/allocrunner/taskrunner/volume_hook.go).
    caps.set_mount_configs(pb::DriverCapabilities::ANY_MOUNTS);
    // Nomad's logmon reads the task's fifos, into which the task writes
    // directly: true would make Nomad start no logmon and lose the logs
    // (client/allocrunner/taskrunner/logmon_hook.go isLoggingDisabled).
    caps.set_disable_log_collection(false);
    // Nomad gives a task without a user a UID/GID from its pool, named
    // "nomad-<id>" and known to no user database
    // (client/allocrunner/taskrunner/dynamic_users_hook.go,
    // helper/users/dynamic/users.go). taskscope resolves a task's user by
    // name in the task's root's user database (src/manager/task_spec.cpp),
    // so such a task would fail to start: false, and Nomad leaves an
    // unset user empty (taskscope then runs the task as root, its
    // default; src/manager/task_spec.hpp).
    caps.set_dynamic_workload_users(false);
}

}  // namespace taskscope::nomad
