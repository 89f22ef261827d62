#pragma once
// One round of CSI Identity calls on a plugin's unix socket. Blocking (gRPC's
// synchronous stub, each call under a deadline): run it off the event loop.

#include <chrono>
#include <string>

#include "common/result.hpp"
#include "plugins/identity_answer.hpp"

namespace taskscope::plugins {

/// Probe, and with `withInfo` also GetPluginInfo and GetPluginCapabilities.
/// PluginUnreachable when the socket does not answer, PluginFailed when a
/// call returns an error status.
common::Result<IdentityAnswer> queryIdentity(const std::string& socketPath, bool withInfo,
                                             std::chrono::milliseconds deadline);

}  // namespace taskscope::plugins
