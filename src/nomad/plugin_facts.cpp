// What the driver tells Nomad about itself, the schemas built from the key
// tables (plugin_facts.hpp).
#include "nomad/plugin_facts.hpp"

#include <cstdlib>
#include <sstream>

#include "nomad/driver_config.hpp"
#include "nomad/node_task_config.hpp"
#include "nomad/task_config.hpp"

namespace taskscope::nomad {

namespace hcl = hashicorp::nomad::plugins::shared::hclspec;
namespace pb = hashicorp::nomad::plugins::drivers::proto;

namespace {

hcl::Spec attr(const hclblock::Attr& a) {
    hcl::Spec s;
    auto* out = s.mutable_attr();
    out->set_name(a.name);
    out->set_type(a.hclType);
    out->set_required(a.required);
    return s;
}

// A key with a default is a Default spec around the attribute, its default
// a Literal (helper/pluginutils/hclspecutils/dec.go decodeDefaultSpec).
hcl::Spec withDefault(hcl::Spec primary, const std::string& literal) {
    hcl::Spec s;
    *s.mutable_default_()->mutable_primary() = std::move(primary);
    s.mutable_default_()->mutable_default_()->mutable_literal()->set_value(literal);
    return s;
}

void addAttrs(hcl::Spec& object, const std::vector<hclblock::Attr>& attrs) {
    auto& out = *object.mutable_object()->mutable_attributes();
    for (const auto& a : attrs)
        out[a.name] = a.defaultLiteral.empty() ? attr(a) : withDefault(attr(a), a.defaultLiteral);
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

// The keys, their types and defaults are the blocks' tables (hcl_block.hpp):
// driver_config.cpp's, task_config.cpp's and node_task_config.cpp's, each
// naming the Nomad source its keys come from.
hcl::Spec configSchema() {
    hcl::Spec s;
    addAttrs(s, hclblock::attrs(driverConfigKeys()));
    return s;
}

hcl::Spec taskConfigSchema() {
    hcl::Spec s;
    addAttrs(s, hclblock::attrs(taskConfigKeys()));
    // The node's keys (issue 47: ulimit, oom_score_adj, IO limits) share the
    // task's block.
    addAttrs(s, hclblock::attrs(nodeTaskKeys()));
    return s;
}

void fillCapabilities(pb::DriverCapabilities& caps, bool dynamicWorkloadUsers) {
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
    // (client/allocrunner/taskrunner/dynamic_users_hook.go Prestart,
    // helper/users/dynamic/users.go; Nomad aa026cc99cfb): the spec
    // builder turns it into the numeric user and group <id>, which the
    // manager runs the task as without a database entry. A unique
    // unprivileged user per task; the plugin's dynamic_workload_users =
    // false leaves an unset user empty (the manager's default: nobody
    // isolated, root on the host's root).
    caps.set_dynamic_workload_users(dynamicWorkloadUsers);
}

}  // namespace taskscope::nomad
