#pragma once
// The plugin block of nomad-driver-taskscope (SetConfig), typed and
// validated: a superset of the plugin blocks of Nomad's exec and raw_exec
// drivers, each key with the meaning and default it has there, plus
// taskscope's own. The keys are one table (driverConfigKeys), which both
// parseDriverConfig and the schema Nomad is sent (plugin_facts.cpp
// configSchema) read; docs/nomad-driver.md has the table. Pure.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "nomad/hcl_block.hpp"
#include "spec/id_ranges.hpp"
#include "spec/schema.hpp"

namespace taskscope::nomad {

/// Filesystem isolation of a task: `chroot` runs it in its own root made
/// of Nomad's task dir (taskscope's spec `isolation`, issue 14), `none`
/// on the host's root like raw_exec.
enum class FsMode { None, Chroot };

/// "chroot" / "none"; InvalidConfig otherwise.
common::Result<FsMode> parseFsMode(const std::string& text);
/// The same words as a codec: the plugin's default_isolation and a task's
/// isolation.
spec::Codec<FsMode> fsModeCodec();

/// A set of Linux capabilities, bit N for capability N (linux/capability.h).
using CapSet = uint64_t;
/// Nomad's exec default set (drivers/shared/capabilities/defaults.go
/// HCLSpecLiteral): Docker's defaults without NET_RAW.
CapSet nomadDefaultCaps();
/// Every capability taskscope knows by name ("all" in Nomad's lists).
CapSet allKnownCaps();
/// A list of capability names as Nomad's capabilities.Set takes them (any
/// case, with or without "CAP_", "all" for every one). InvalidConfig
/// naming `key` and the unknown name; `all` is set when the list said "all".
common::Result<CapSet> parseCapList(const nlohmann::json& list, const std::string& key, bool* all = nullptr);
/// The set as names ("CHOWN", ...), in number order.
std::vector<std::string> capNames(CapSet set);
/// parseCapList as a codec; it writes the names in name order, as
/// Nomad's own default literal lists them.
spec::Codec<CapSet> capListCodec();

/// The plugin block's settings.
struct DriverConfig {
    /// raw_exec's `enabled`; taskscope's default is true (exec has no
    /// such key and is always on).
    bool enabled = true;
    FsMode defaultIsolation = FsMode::Chroot;  ///< for a task whose config says nothing
    /// exec's `no_pivot_root`: taskscope's shim enters an isolated task's
    /// root only with pivot_root, so true refuses isolated tasks at start.
    bool noPivotRoot = false;
    bool defaultPidHost = false;  ///< exec's `default_pid_mode` ("private")
    bool defaultIpcHost = false;  ///< exec's `default_ipc_mode` ("private")
    CapSet allowCaps = nomadDefaultCaps();  ///< exec's `allow_caps`
    spec::IdRanges deniedHostUids;          ///< exec's and raw_exec's `denied_host_uids`
    spec::IdRanges deniedHostGids;          ///< exec's and raw_exec's `denied_host_gids`
    std::vector<std::string> deniedEnvvars;  ///< raw_exec's `denied_envvars` (globs)
    /// taskscope's own: answer dynamic_workload_users, so that Nomad gives
    /// every task without a user a UID/GID of its own (exec2 does).
    bool dynamicWorkloadUsers = true;
};

/// The plugin block's keys, each with its HCL type and default (the
/// DriverConfig's): what configSchema tells Nomad and what
/// parseDriverConfig reads.
const std::vector<hclblock::Key<DriverConfig>>& driverConfigKeys();

/// The decoded plugin block (the cty value as JSON; null attributes are
/// ones the block left out). InvalidConfig naming the key for an unknown
/// key or a bad value, where Nomad's exec validates them (SetConfig:
/// Config.validate, validators.NewValidator).
common::Result<DriverConfig> parseDriverConfig(const nlohmann::json& config);

}  // namespace taskscope::nomad
