#include "plugins/identity_answer.hpp"

#include <algorithm>

#include "common/error_names.hpp"
#include "csi_identity.pb.h"

namespace taskscope::plugins {

namespace {

using common::makeError;
using common::Result;

bool alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// The name of a capability; an enum number this version of the spec
// lacks has none (its _Name is empty), and is "UNKNOWN" like an unset one.
std::string capabilityName(const csi::v1::PluginCapability& c) {
    if (c.has_service() && csi::v1::PluginCapability_Service_Type_IsValid(c.service().type()))
        return csi::v1::PluginCapability_Service_Type_Name(c.service().type());
    if (c.has_volume_expansion() && csi::v1::PluginCapability_VolumeExpansion_Type_IsValid(c.volume_expansion().type()))
        return "VOLUME_EXPANSION_" + csi::v1::PluginCapability_VolumeExpansion_Type_Name(c.volume_expansion().type());
    return "UNKNOWN";
}

}  // namespace

bool isProviderName(std::string_view name) {
    if (name.empty() || name.size() > kMaxProviderName || !alnum(name.front()) || !alnum(name.back())) return false;
    return std::all_of(name.begin(), name.end(), [](char c) { return alnum(c) || c == '-' || c == '.'; });
}

void takeProbe(const csi::v1::ProbeResponse& reply, IdentityAnswer& answer) {
    answer.ready = !reply.has_ready() || reply.ready().value();
    answer.message = answer.ready ? "" : "Probe: the plugin says it is not ready";
}

Result<void> takePluginInfo(const csi::v1::GetPluginInfoResponse& reply, IdentityAnswer& answer) {
    if (reply.name().empty()) return makeError(common::errors::kPluginFailed, "GetPluginInfo: the plugin gave no name");
    // The name is quoted only when it is short: a long one is said by its length.
    if (!isProviderName(reply.name()))
        return makeError(
            common::errors::kPluginFailed,
            "GetPluginInfo: name " +
                (reply.name().size() <= kMaxProviderName ? "'" + reply.name() + "'"
                                                         : "of " + std::to_string(reply.name().size()) + " bytes") +
                " is not a CSI plugin name (at most " + std::to_string(kMaxProviderName) +
                " letters, digits, '-' and '.', a letter or digit at each end)");
    if (reply.vendor_version().size() > kMaxVendorVersion)
        return makeError(common::errors::kPluginFailed,
                         "GetPluginInfo: vendor_version is " + std::to_string(reply.vendor_version().size()) +
                             " bytes long, more than " + std::to_string(kMaxVendorVersion));
    answer.provider = reply.name();
    answer.version = reply.vendor_version();
    return {};
}

void takeCapabilities(const csi::v1::GetPluginCapabilitiesResponse& reply, IdentityAnswer& answer) {
    // Each name once: a plugin repeating one (or answering with a million)
    // costs the registry's file and the bus at most the spec's few names.
    answer.capabilities.clear();
    for (const auto& c : reply.capabilities()) {
        auto name = capabilityName(c);
        if (std::find(answer.capabilities.begin(), answer.capabilities.end(), name) == answer.capabilities.end())
            answer.capabilities.push_back(std::move(name));
    }
}

}  // namespace taskscope::plugins
