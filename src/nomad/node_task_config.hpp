#pragma once
// The driver's task-config keys for what a node gives a task beyond
// exec's and raw_exec's own keys (issue 47: what operators have long asked
// Nomad for: docker's --ulimit and --device-*-bps/iops, raw_exec's
// oom_score_adj, systemd's IOWeight=), and Nomad's devices: one table of
// keys (nodeTaskKeys: name, HCL type, reader into the spec), kept apart
// from exec's keys so that the schema's two halves are each read in one
// place. Pure.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "driver.pb.h"
#include "nomad/hcl_block.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::nomad {

/// The node's keys, each with its HCL type and what reads it into the
/// spec: the task config schema's second half (plugin_facts.cpp
/// taskConfigSchema) and addNodeTaskKey read this one table.
const std::vector<hclblock::Key<spec::TaskSpec>>& nodeTaskKeys();

/// Whether `key` is one of nodeTaskKeys.
bool isNodeTaskKey(const std::string& key);

/// Reads one node key's value into the spec (null: left out);
/// InvalidConfig naming "config.<key>" (and the map's entry) otherwise.
common::Result<void> addNodeTaskKey(const std::string& key, const nlohmann::json& value, spec::TaskSpec& out);

/// docker's byte sizes (go-units RAMInBytes): a number with an optional
/// binary suffix, k/kb, m/mb, g/gb, t/tb in any case: "10M" = 10485760.
common::Result<uint64_t> parseByteRate(const std::string& text);

/// Nomad's TaskConfig.Devices (from its device plugins) as the spec's
/// devices. `isolated`: bound at task_path in the task's /dev; else the
/// task sees the host's /dev, so a device must be at its host path.
/// Empty permissions are "rwm" (docker's default).
common::Result<void> addNomadDevices(const hashicorp::nomad::plugins::drivers::proto::TaskConfig& cfg, bool isolated,
                                     spec::TaskSpec& out);

/// The allocation network's files for a task that joins it (GROUP) in
/// its own root: Nomad's DNSConfig (the group's dns block, or what its
/// CNI plugins said) as the spec's dns, and the network's HostsConfig
/// (address and hostname; Nomad fills the address from its network
/// setup, see allocHostnameLabel) as its hosts. A task on the host's
/// network or root keeps the host's files, as with exec and raw_exec.
void addNetworkFiles(const hashicorp::nomad::plugins::drivers::proto::TaskConfig& cfg, bool isolated,
                     spec::TaskSpec& out);

/// The label of a NetworkIsolationSpec whose value Nomad's network hook
/// (client/allocrunner/network_hook.go, dockerNetSpecHostnameKey) makes
/// the HostsConfig's hostname, beside the address its network setup
/// got: the one way a driver that creates the namespace is told the
/// allocation's address.
inline constexpr const char kAllocHostnameLabel[] = "docker_sandbox_hostname";

/// The hostname an allocation's hosts entry names: the group network's
/// `hostname`, else the allocation's short id (its first 8 characters,
/// as Nomad shows allocations).
std::string allocHostname(const std::string& allocId, const std::string& networkHostname);

}  // namespace taskscope::nomad
