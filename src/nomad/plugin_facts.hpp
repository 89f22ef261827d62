#pragma once
// What the driver tells Nomad about itself, in one place: its name and
// versions, the go-plugin handshake, the config schemas, and its
// capabilities. Every fact about Nomad or go-plugin names the file it
// comes from; they were checked against Nomad 2.0.6-dev (commit
// aa026cc99cfb, 2026-08) and go-plugin v1.8.0+ (commit dd3617ad0257),
// which is what that Nomad links (its go.mod). docs/nomad-driver.md says
// what the driver reports and why.

#include <string>

#include "base.pb.h"
#include "driver.pb.h"
#include "hclspec.pb.h"

namespace taskscope::nomad {

/// The driver's name in Nomad: a job's `driver = "taskscope"`.
inline constexpr const char* kPluginName = "taskscope";
/// The file name Nomad's client finds in its plugin_dir. Since Nomad 1.10
/// the client loads a plugin there only when the agent config has a
/// `plugin` block labelled with this name: the loader matches blocks by
/// the executable's file name, minus ".exe" (cleanPluginExecutable in
/// helper/pluginutils/loader/util.go; fingerprintPlugins in loader/init.go
/// skips an unreferenced one with "plugin not referenced in the agent
/// configuration file, loading skipped").
inline constexpr const char* kPluginFileName = "nomad-driver-taskscope";
/// The driver plugin API version Nomad's client speaks: drivers.ApiVersion010
/// (plugins/drivers/versions.go), the only one in the loader's
/// AgentSupportedApiVersions (helper/pluginutils/loader/api_versions.go).
/// The loader compares versions as semver (loader/init.go selectApiVersion),
/// so "0.1.0" matched too; this is Nomad's own spelling.
inline constexpr const char* kPluginApiVersion = "v0.1.0";

/// go-plugin's handshake as Nomad configures it (base.Handshake in
/// plugins/base/plugin.go): Nomad sets this variable to this value in the
/// environment of the plugins it launches; anything else is a person
/// running the binary.
inline constexpr const char* kMagicCookieKey = "NOMAD_PLUGIN_MAGIC_COOKIE";
inline constexpr const char* kMagicCookieValue = "e4327c2e01eabfd75a8a67adb114fb34a757d57eee7728d857a8cec6e91a7255";
/// go-plugin's own protocol (CoreProtocolVersion in go-plugin's server.go;
/// its client refuses any other with "Incompatible core API version").
inline constexpr int kCoreProtocolVersion = 1;
/// Nomad's app protocol: base.Handshake's ProtocolVersion 2 ("0.9+ grpc
/// based", plugins/base/plugin.go). Every Nomad since 0.9 launches and
/// reattaches its plugins with a client that accepts this version only
/// (helper/pluginutils/loader/init.go fingerprintPlugin, loader.go
/// dispensePlugin: Plugins under HandshakeConfig, which go-plugin files
/// as VersionedPlugins[2]).
inline constexpr int kAppProtocolVersion = 2;
/// The gRPC health service name go-plugin's client checks (Ping) and its
/// own servers mark SERVING (GRPCServiceName in go-plugin's grpc_server.go).
inline constexpr const char* kHealthService = "plugin";

/// What go-plugin's client puts in a plugin's environment (go-plugin
/// client.go Start, constants.go) and what the driver does with it.
struct PluginEnv {
    /// PLUGIN_PROTOCOL_VERSIONS: the app versions the client accepts; the
    /// driver serves version 2 only and says so, the client decides.
    std::string protocolVersions;
    /// PLUGIN_UNIX_SOCKET_DIR: where to make the socket (go-plugin's
    /// serverListener_unix; set when the client has a UnixSocketConfig or
    /// a RunnerFunc; Nomad sets neither). Empty: a private directory.
    std::string socketDir;
    /// PLUGIN_UNIX_SOCKET_GROUP: a group (name or gid) to own the socket,
    /// made group-writable (0660), as go-plugin's setGroupWritable does.
    std::string socketGroup;
    /// PLUGIN_MULTIPLEX_GRPC set: the client asks whether the plugin
    /// multiplexes broker connections over its one socket. It does not,
    /// and says so in the handshake's 7th field.
    bool multiplexAsked = false;
    /// PLUGIN_CLIENT_CERT set: the client wants AutoMTLS (TLS with a
    /// certificate pair made per launch). The driver serves plaintext
    /// gRPC on a socket only its owner reaches and refuses to start
    /// rather than fail the client's TLS handshake; Nomad never asks
    /// (no AutoMTLS in its ClientConfigs, loader/init.go, loader/loader.go).
    bool autoMtlsAsked = false;
};

/// Reads the variables above from the environment.
PluginEnv pluginEnvFromProcess();

/// Whether the client's PLUGIN_PROTOCOL_VERSIONS list ("2", "1,2", ...)
/// includes the version the driver serves; an empty list (an old client
/// that sends none) counts as yes, as go-plugin's server takes it.
bool clientAcceptsAppVersion(const std::string& versions);

/// The handshake line go-plugin's client reads from the plugin's stdout
/// (go-plugin server.go Serve; client.go Start parses it):
/// CORE|APP|unix|SOCKET|grpc|SERVER_CERT, the certificate empty (no
/// AutoMTLS), and |false appended when the client asked about broker
/// multiplexing (a 7th field is only sent to a client that asked: older
/// clients split the line into at most 6 fields).
std::string handshakeLine(const std::string& socketPath, bool multiplexAsked);

/// The filesystem isolation Nomad is told (DriverCapabilities.fs_isolation):
/// IMAGE, not CHROOT. Nomad's client reads it before a task's directory
/// is built (client/allocdir/task_dir.go TaskDir.Build): with CHROOT it
/// links the shared alloc dir into the task dir and hard-links or copies
/// every chroot_env entry into it (buildChroot/embedDirs), the cost
/// taskscope's isolation exists to avoid (issue 14 binds those paths
/// read-only at start instead); with IMAGE it makes only <task>/local,
/// <task>/tmp, <task>/secrets and <task>/private and leaves the root, the
/// /alloc bind and the mounts to the driver, which is what taskscope's
/// `isolation` does. Either way Nomad tells the task the in-root paths
/// (/alloc, /local, /secrets), which the spec builder rewrites for a task
/// run with isolation = "none". (UNVEIL is Nomad's own exec2 mode: the
/// client bind-mounts the dirs under its mounts_dir for a Landlock
/// sandbox; NONE would tell the task host paths, which an isolated task
/// does not see.)
inline constexpr auto kFsIsolation = hashicorp::nomad::plugins::drivers::proto::DriverCapabilities::IMAGE;
/// HOST, and GROUP: the allocation's namespace, which Nomad asks the
/// driver for (must_create_network) and then wires with its own CNI
/// bridge; taskscope makes it as a network of mode "none".
inline constexpr hashicorp::nomad::plugins::drivers::proto::NetworkIsolationSpec::NetworkIsolationMode
    kNetworkIsolationModes[] = {hashicorp::nomad::plugins::drivers::proto::NetworkIsolationSpec::HOST,
                                hashicorp::nomad::plugins::drivers::proto::NetworkIsolationSpec::GROUP};

/// The plugin block's schema: driverConfigKeys (driver_config.hpp), exec's
/// and raw_exec's keys with their defaults and taskscope's own.
hashicorp::nomad::plugins::shared::hclspec::Spec configSchema();
/// The task's config block's schema: taskConfigKeys (task_config.hpp,
/// exec's and raw_exec's keys and taskscope's `isolation`) and the node's
/// keys (node_task_config.hpp nodeTaskKeys).
hashicorp::nomad::plugins::shared::hclspec::Spec taskConfigSchema();
/// Every field of DriverCapabilities (plugins/drivers/proto/driver.proto;
/// Nomad's client converts them in plugins/drivers/client.go
/// Capabilities); plugin_facts.cpp says why each has its value.
/// dynamic_workload_users is the plugin block's setting.
void fillCapabilities(hashicorp::nomad::plugins::drivers::proto::DriverCapabilities& caps,
                      bool dynamicWorkloadUsers = true);

}  // namespace taskscope::nomad
