#pragma once
// A task that is a plugin (Nomad's csi_plugin stanza): what its spec says,
// and where its socket lives on the host.

#include <cstdint>
#include <string>

namespace taskscope::spec {

struct PluginSpec {
    std::string type;                 ///< "csi" (the registry itself is generic)
    std::string name;                 ///< unique per type on the node
    std::string mountDir = "/csi";    ///< where an isolated task sees the plugins' directory
    std::string socket = "csi.sock";  ///< the socket's file name in that directory
    int64_t healthIntervalMs = 30000;
    int64_t socketTimeoutMs = 60000;  ///< unhealthy (with that reason) when it never appears

    bool operator==(const PluginSpec&) const = default;
};

/// "<type>/<name>": one plugin of a name per type on the node.
std::string pluginId(const PluginSpec& spec);

/// The host directory a plugin's socket is made in: <root>/<type>/<name>.
std::string pluginHostDir(const std::string& root, const PluginSpec& spec);

/// The longest path a unix socket address holds (sun_path less its NUL).
inline constexpr size_t kMaxSocketPath = 107;

}  // namespace taskscope::spec
