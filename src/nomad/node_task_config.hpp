#pragma once
// The driver's task-config keys for what a node gives a task beyond
// exec's and raw_exec's own keys (issue 47: what operators have long asked
// Nomad for), and Nomad's devices: one table of keys (name, HCL type,
// converter into the spec), kept apart from exec's keys so that the
// schema's two halves are each read in one place. Pure.
//
//   ulimit            map(string)  docker's --ulimit: nofile = "65536:65536"
//   oom_score_adj     number       0..1000 (raw_exec's rule: not negative)
//   io_weight         number       systemd's IOWeight=, 1..10000
//   device_read_bps   map(string)  docker's --device-read-bps: "/dev/sda" = "10M"
//   device_write_bps  map(string)
//   device_read_iops  map(number)  docker's --device-read-iops: "/dev/sda" = 100
//   device_write_iops map(number)

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "driver.pb.h"
#include "spec/task_spec.hpp"

namespace taskscope::nomad {

/// (key, HCL type) of each node key, for the task config schema.
const std::vector<std::pair<const char*, const char*>>& nodeTaskKeys();

/// Whether `key` is one of nodeTaskKeys.
bool isNodeTaskKey(const std::string& key);

/// Reads one node key's (non-null) value into the spec; InvalidConfig
/// naming "config.<key>" (and the map's entry) otherwise.
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
