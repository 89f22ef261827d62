#pragma once
// What a CNI DEL may leave behind, found and removed by the allocation's
// container id: host-local IPAM reservations, iptables and ip6tables
// rules and chains (on Debian, iptables-nft: the same rules `nft list
// ruleset` shows), and nft-native rules (plugins with an nftables
// backend) whose comment carries the id. Run after every DEL, failed or
// not, and when a restart finds a network that was being made or removed.

#include <string>
#include <vector>

#include "common/result.hpp"

namespace taskscope::network {

/// Removes the files of dir/<network>/ whose first line is containerId
/// (host-local's reservation files); returns how many.
common::Result<int> sweepIpam(const std::string& ipamDir, const std::string& network, const std::string& containerId);

/// The addresses dir/<network>/ holds reserved for containerId (host-local
/// names each reservation file by its address). Read before DEL, which
/// releases them, for a record that has none (a crash between ADD and
/// its record): the firewall plugin's rules are found by address only.
std::vector<std::string> reservedAddresses(const std::string& ipamDir, const std::string& network,
                                           const std::string& containerId);

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

/// Runs iptables-save and ip6tables-save (each when installed) and the
/// sweep's commands with the matching binary; returns how many rules and
/// chains went. Internal when a save cannot run; commands that fail are
/// skipped (a rule someone else removed meanwhile).
common::Result<int> sweepIptables(const std::string& containerId, const std::vector<std::string>& addresses);

/// One nft invocation (the arguments after "nft").
using NftCommand = std::vector<std::string>;

/// From `nft -j list ruleset` output: "delete rule FAMILY TABLE CHAIN
/// handle N" for every rule whose comment names `id: "<containerId>"`
/// (iptables' comment, kept by iptables-nft) or ends with ", id:
/// <containerId>" (the CNI plugins' nftables backend), in any table.
/// Pure, for tests; output that is not nft's JSON gives no commands.
std::vector<NftCommand> nftSweep(const std::string& jsonRuleset, const std::string& containerId);

/// Runs `nft -j list ruleset` and nftSweep's commands when nft is
/// installed (else 0); returns how many rules went.
common::Result<int> sweepNft(const std::string& containerId);

}  // namespace taskscope::network
