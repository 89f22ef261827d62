#pragma once
// What a CNI DEL may leave behind, found and removed by the allocation's
// container id: host-local IPAM reservations and iptables rules and
// chains (on Debian, iptables-nft: the same rules `nft list ruleset`
// shows). Run after every DEL, failed or not, and when a restart finds a
// network that was being made or removed.

#include <string>
#include <vector>

#include "common/result.hpp"

namespace taskscope::network {

/// Removes the files of dir/<network>/ whose first line is containerId
/// (host-local's reservation files); returns how many.
common::Result<int> sweepIpam(const std::string& ipamDir, const std::string& network, const std::string& containerId);

/// One iptables invocation (the arguments after "iptables -w").
using IptablesCommand = std::vector<std::string>;

/// From `iptables-save` output: the commands that delete every rule whose
/// comment (unescaped) names `id: "<containerId>"`, every rule of a CNI
/// chain that matches one of `addresses` (the firewall plugin's, which
/// carry no comment) or jumps to a per-container chain being removed, and
/// then flush and delete those per-container chains (CNI-<hash>,
/// CNI-DN-<hash>). Pure, for tests.
std::vector<IptablesCommand> iptablesSweep(const std::string& saveOutput, const std::string& containerId,
                                           const std::vector<std::string>& addresses);

/// Splits an iptables-save line into arguments, unescaping quoted ones.
std::vector<std::string> splitSaveLine(const std::string& line);

/// Runs iptables-save and the sweep's commands; returns how many rules and
/// chains went. Internal when iptables-save cannot run; commands that
/// fail are skipped (a rule someone else removed meanwhile).
common::Result<int> sweepIptables(const std::string& containerId, const std::vector<std::string>& addresses);

}  // namespace taskscope::network
