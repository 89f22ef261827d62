#include "nomad/plugin_facts.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <sstream>

#include "nomad/node_task_config.hpp"
#include "spec/isolation.hpp"

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

// The keys of Nomad's exec and raw_exec drivers, as their configSpec and
// taskConfigSpec declare them at Nomad commit
// aa026cc99cfb74a77e519a1c1f0c78ba1b452705 (2026-08-21;
// drivers/exec/driver.go, drivers/rawexec/driver.go), with the same types
// and defaults, so that a plugin block or a job's config block written for
// either decodes here unchanged; taskscope's own keys after them. What
// each means under taskscope: driver_config.hpp, task_config.hpp and the
// table in docs/nomad-driver.md.
hcl::Spec configSchema() {
    hcl::Spec s;
    auto& attrs = *s.mutable_object()->mutable_attributes();
    // raw_exec's `enabled` defaults to false (exec has none and is always
    // on); taskscope's to true, as before: an installed driver runs.
    attrs["enabled"] = withDefault(attr("enabled", "bool", false), "true");
    // exec.
    attrs["no_pivot_root"] = withDefault(attr("no_pivot_root", "bool", false), "false");
    attrs["default_pid_mode"] = withDefault(attr("default_pid_mode", "string", false), "\"private\"");
    attrs["default_ipc_mode"] = withDefault(attr("default_ipc_mode", "string", false), "\"private\"");
    // exec's default literal (capabilities.HCLSpecLiteral).
    static const std::string defaultCaps = nlohmann::json(spec::kNomadDefaultCapabilities).dump();
    attrs["allow_caps"] = withDefault(attr("allow_caps", "list(string)", false), defaultCaps.c_str());
    // exec and raw_exec.
    attrs["denied_host_uids"] = attr("denied_host_uids", "string", false);
    attrs["denied_host_gids"] = attr("denied_host_gids", "string", false);
    // raw_exec.
    attrs["denied_envvars"] = attr("denied_envvars", "list(string)", false);
    // taskscope's.
    attrs["default_isolation"] = withDefault(attr("default_isolation", "string", false), "\"chroot\"");
    attrs["dynamic_workload_users"] = withDefault(attr("dynamic_workload_users", "bool", false), "true");
    return s;
}

hcl::Spec taskConfigSchema() {
    hcl::Spec s;
    auto& attrs = *s.mutable_object()->mutable_attributes();
    // exec and raw_exec.
    attrs["command"] = attr("command", "string", true);
    attrs["args"] = attr("args", "list(string)", false);
    attrs["work_dir"] = attr("work_dir", "string", false);
    // exec.
    attrs["pid_mode"] = attr("pid_mode", "string", false);
    attrs["ipc_mode"] = attr("ipc_mode", "string", false);
    attrs["cap_add"] = attr("cap_add", "list(string)", false);
    attrs["cap_drop"] = attr("cap_drop", "list(string)", false);
    // raw_exec (its oom_score_adj is the node side's, issue 47 item 7).
    attrs["cgroup_v2_override"] = attr("cgroup_v2_override", "string", false);
    attrs["cgroup_v1_override"] = attr("cgroup_v1_override", "list(map(string))", false);
    attrs["denied_envvars"] = attr("denied_envvars", "list(string)", false);
    // taskscope's.
    attrs["isolation"] = attr("isolation", "string", false);
    // --- the node's keys (issue 47: ulimit, oom_score_adj, IO limits), one
    // table in node_task_config.cpp.
    for (const auto& [name, type] : nodeTaskKeys()) attrs[name] = attr(name, type, false);
    // --- end of the node's keys.
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
