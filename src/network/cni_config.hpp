#pragma once
// What goes to a CNI plugin and what comes back, as pure functions: the
// node's default plugin chain, each plugin's stdin (the chain's name and
// version, the previous result, the port mappings it asked for), and the
// result and error documents of the CNI spec.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "network/network_spec.hpp"

namespace taskscope::network {

/// Node configuration of allocation networks (manager config keys network_*).
struct NodeNetworkConfig {
    std::string cniPath = "/usr/lib/cni";    ///< where the plugin binaries are (Debian's package)
    std::string bridge = "nomad";            ///< the bridge every allocation's veth joins
    std::string subnet = "172.26.64.0/20";   ///< host-local IPAM range (Nomad's default)
    std::string networkName = "taskscope";   ///< the CNI network name (IPAM dir, rule comments)
    std::string conflistPath;                ///< a conflist file that replaces the default chain
    std::string netnsDir = "/run/netns";     ///< iproute2's directory: `ip netns list` sees ours
    std::string ipamDir = "/var/lib/cni/networks";
    int64_t pluginTimeoutMs = 60000;         ///< a plugin running longer is killed (CniFailed)
};

/// The chain Nomad's bridge mode runs: loopback; bridge (gateway, ip
/// masquerade, hairpin, host-local IPAM on the node subnet); firewall;
/// portmap (SNAT, port mappings as a capability).
nlohmann::json defaultConflist(const NodeNetworkConfig& node);

/// The stdin of `plugin` (one entry of conflist.plugins): the plugin's own
/// keys plus the list's name and cniVersion, prevResult unless null, and
/// runtimeConfig.portMappings when the plugin declares that capability.
nlohmann::json pluginInput(const nlohmann::json& conflist, const nlohmann::json& plugin,
                           const nlohmann::json& prevResult, const std::vector<PortMapping>& ports);

/// The addresses (CIDR) a result gives the allocation.
struct CniResult {
    std::vector<std::string> addresses;
    nlohmann::json raw;
};

/// Parses a plugin's stdout as a result (Internal when it is none).
common::Result<CniResult> parseCniResult(const std::string& out);

/// A plugin that failed: CniFailed with its error document's msg, details
/// and code when it wrote one, else its exit status and stderr.
common::Error cniError(const std::string& plugin, const std::string& command, const std::string& out,
                       const std::string& err, int status);

}  // namespace taskscope::network
