#pragma once
// A plugin's CSI Identity answers as the registry keeps them: pure
// converters from the decoded protobuf messages (csi_identity.proto), with
// the spec's rules and the bounds that the registration file and the bus
// need. No gRPC: identity_client.cpp makes the calls, these read the
// replies, and the fuzz target (fuzz/targets/csi_answers.cpp) feeds them
// any bytes that parse as the messages.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace csi::v1 {
class ProbeResponse;
class GetPluginInfoResponse;
class GetPluginCapabilitiesResponse;
}  // namespace csi::v1

namespace taskscope::plugins {

struct IdentityAnswer {
    bool ready = false;
    bool haveInfo = false;                  ///< GetPluginInfo/GetPluginCapabilities were asked
    std::string provider;                   ///< GetPluginInfo's name
    std::string version;                    ///< its vendor_version
    std::vector<std::string> capabilities;  ///< e.g. "CONTROLLER_SERVICE", "VOLUME_EXPANSION_ONLINE"; each once
    std::string message;                    ///< why not ready, for people
};

/// The CSI spec's bound on GetPluginInfo's name.
inline constexpr size_t kMaxProviderName = 63;
/// Ours on its vendor_version (the spec calls it opaque): it is kept in
/// the registration file and published on the bus.
inline constexpr size_t kMaxVendorVersion = 256;

/// Whether `name` is a CSI plugin name: at most kMaxProviderName
/// characters, letters, digits, '-' and '.', a letter or digit at each end.
bool isProviderName(std::string_view name);

/// Probe: ready unless the plugin says it is not (unset means ready).
void takeProbe(const csi::v1::ProbeResponse& reply, IdentityAnswer& answer);

/// GetPluginInfo: the provider and its version. PluginFailed naming the
/// field when the name is missing or not a CSI name, or the version is
/// longer than kMaxVendorVersion; `answer` is then left as it was.
common::Result<void> takePluginInfo(const csi::v1::GetPluginInfoResponse& reply, IdentityAnswer& answer);

/// GetPluginCapabilities: each capability's name once, in the order
/// given; one this spec version does not name (an enum number it lacks,
/// no type set) is "UNKNOWN".
void takeCapabilities(const csi::v1::GetPluginCapabilitiesResponse& reply, IdentityAnswer& answer);

}  // namespace taskscope::plugins
