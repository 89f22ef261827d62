#pragma once
// What the driver tells Nomad about itself, in one place: its name and
// version, the go-plugin handshake, the config schemas, and its
// capabilities.

#include "base.pb.h"
#include "driver.pb.h"
#include "hclspec.pb.h"

namespace taskscope::nomad {

inline constexpr const char* kPluginName = "taskscope";
inline constexpr const char* kPluginApiVersion = "0.1.0";
/// go-plugin's handshake: Nomad sets this variable to this value for the
/// plugins it launches; anything else is a person running the binary.
inline constexpr const char* kMagicCookieKey = "NOMAD_PLUGIN_MAGIC_COOKIE";
inline constexpr const char* kMagicCookieValue = "e4327c2e01eabfd75a8a67adb114fb34a757d57eee7728d857a8cec6e91a7255";
/// go-plugin core protocol 1; app protocol 1 is Nomad's base plugin
/// handshake (its ProtocolVersion; 2 is only its legacy executor's).
inline constexpr int kCoreProtocolVersion = 1;
inline constexpr int kAppProtocolVersion = 1;

/// IMAGE, not CHROOT. Nomad's client reads this before a task's directory
/// is built (allocdir TaskDir.Build): with CHROOT it hard-links or copies
/// every chroot_env entry into the task dir and links the shared alloc dir
/// into it itself, the cost taskscope's isolation exists to avoid (issue
/// 14 binds those paths read-only at start instead); with IMAGE it only
/// makes local/, secrets/ and tmp/ and leaves the root, the /alloc bind
/// and the mounts to the driver, which is what taskscope's `isolation`
/// does. Either way Nomad tells the task the in-root paths (/alloc,
/// /local, /secrets), which the spec builder rewrites for a task run
/// with isolation = "none".
inline constexpr auto kFsIsolation = hashicorp::nomad::plugins::drivers::proto::DriverCapabilities::IMAGE;
/// HOST, and GROUP: the allocation's namespace, which Nomad asks the
/// driver for (must_create_network) and then wires with its own CNI
/// bridge; taskscope makes it as a network of mode "none".
inline constexpr hashicorp::nomad::plugins::drivers::proto::NetworkIsolationSpec::NetworkIsolationMode
    kNetworkIsolationModes[] = {hashicorp::nomad::plugins::drivers::proto::NetworkIsolationSpec::HOST,
                                hashicorp::nomad::plugins::drivers::proto::NetworkIsolationSpec::GROUP};

/// The plugin block: `enabled` (bool, default true), `default_isolation`
/// ("chroot" or "none", default "chroot").
hashicorp::nomad::plugins::shared::hclspec::Spec configSchema();
/// The task's config block: `command` (string, required), `args` (list of
/// strings), `isolation` ("chroot" or "none"; default the plugin's).
hashicorp::nomad::plugins::shared::hclspec::Spec taskConfigSchema();
void fillCapabilities(hashicorp::nomad::plugins::drivers::proto::DriverCapabilities& caps);

}  // namespace taskscope::nomad
