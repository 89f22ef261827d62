#pragma once
// One round of CSI Identity calls on a plugin's unix socket. Blocking (gRPC's
// synchronous stub, each call under a deadline): run it off the event loop.

#include <chrono>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace taskscope::plugins {

struct IdentityAnswer {
    bool ready = false;
    bool haveInfo = false;  ///< GetPluginInfo/GetPluginCapabilities were asked
    std::string provider;   ///< GetPluginInfo's name
    std::string version;    ///< its vendor_version
    std::vector<std::string> capabilities;  ///< e.g. "CONTROLLER_SERVICE", "VOLUME_EXPANSION_ONLINE"
    std::string message;    ///< why not ready, for people
};

/// Probe, and with `withInfo` also GetPluginInfo and GetPluginCapabilities.
/// PluginUnreachable when the socket does not answer, PluginFailed when a
/// call returns an error status.
common::Result<IdentityAnswer> queryIdentity(const std::string& socketPath, bool withInfo,
                                             std::chrono::milliseconds deadline);

}  // namespace taskscope::plugins
