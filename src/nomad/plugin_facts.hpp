#pragma once
// What the driver tells Nomad about itself, in one place: its name and
// version, the go-plugin handshake, the config schemas, and its
// capabilities. Filesystem and network isolation are being added to
// taskscope separately: when they land, kFsIsolation and
// kNetworkIsolationModes are the lines to change.

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

inline constexpr auto kFsIsolation = hashicorp::nomad::plugins::drivers::proto::DriverCapabilities::NONE;
inline constexpr hashicorp::nomad::plugins::drivers::proto::NetworkIsolationSpec::NetworkIsolationMode
    kNetworkIsolationModes[] = {hashicorp::nomad::plugins::drivers::proto::NetworkIsolationSpec::HOST};

/// The plugin block: `enabled` (bool, default true).
hashicorp::nomad::plugins::shared::hclspec::Spec configSchema();
/// The task's config block: `command` (string, required), `args` (list of strings).
hashicorp::nomad::plugins::shared::hclspec::Spec taskConfigSchema();
void fillCapabilities(hashicorp::nomad::plugins::drivers::proto::DriverCapabilities& caps);

}  // namespace taskscope::nomad
