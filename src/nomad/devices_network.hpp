#pragma once
// What Nomad's TaskConfig message gives a task besides its config block:
// the devices its device plugins reserved, and the allocation network's
// resolv.conf and hosts. Pure; apart from node_task_config.hpp, whose key
// table needs none of Nomad's protobuf types.

#include <string>

#include "common/result.hpp"
#include "driver.pb.h"
#include "spec/task_spec.hpp"

namespace taskscope::nomad {

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
