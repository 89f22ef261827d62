// Fuzz target: a CSI plugin's Identity answers (src/plugins/
// identity_answer.hpp), which a plugin's task controls entirely. Byte 0
// picks the message (Probe, GetPluginInfo, GetPluginCapabilities); the
// rest is parsed with the generated code (ParseFromArray, as gRPC's
// deserializer does: bytes it refuses never reach the registry) and fed
// to the converter over an answer a plugin gave before, which then
// becomes the registration the manager writes (registrationText) and
// reads back after a restart (parseRegistration).
// Properties: no crash or hang, no exception (registrationText throws on
// text that is not UTF-8); a refused GetPluginInfo names itself and
// leaves the answer as it was; an accepted one has a CSI name and a
// version within kMaxVendorVersion; the capabilities are the spec's names
// (or UNKNOWN), each once; the registration reads back the same; the
// converters keep no state, and a good answer converts after any input.

#include <string>

#include "csi_identity.pb.h"
#include "fuzz_support.hpp"
#include "plugins/identity_answer.hpp"
#include "plugins/registration.hpp"

using namespace taskscope;
using namespace taskscope::plugins;

namespace {

IdentityAnswer before() {
    IdentityAnswer a;
    a.ready = true;
    a.haveInfo = true;
    a.provider = "csi.example.com";
    a.version = "1.0.0";
    a.capabilities = {"CONTROLLER_SERVICE"};
    return a;
}

bool same(const IdentityAnswer& a, const IdentityAnswer& b) {
    return a.ready == b.ready && a.provider == b.provider && a.version == b.version &&
           a.capabilities == b.capabilities && a.message == b.message;
}

bool knownCapability(const std::string& name) {
    for (const char* k :
         {"UNKNOWN", "CONTROLLER_SERVICE", "VOLUME_ACCESSIBILITY_CONSTRAINTS", "GROUP_CONTROLLER_SERVICE",
          "VOLUME_EXPANSION_UNKNOWN", "VOLUME_EXPANSION_ONLINE", "VOLUME_EXPANSION_OFFLINE"})
        if (name == k) return true;
    return false;
}

void registers(const IdentityAnswer& a) {
    fuzz::check(isProviderName(a.provider), "a provider that is not a CSI name");
    fuzz::check(a.version.size() <= kMaxVendorVersion, "a version past its bound");
    for (size_t i = 0; i < a.capabilities.size(); ++i) {
        fuzz::check(knownCapability(a.capabilities[i]), "a capability the spec does not name");
        for (size_t j = 0; j < i; ++j) fuzz::check(a.capabilities[j] != a.capabilities[i], "a capability twice");
    }
    const Registration r{"csi", "vol", "a1", "plugin", a.provider, a.version, a.capabilities, a.ready};
    auto back = parseRegistration(registrationText(r));
    fuzz::check(back.ok() && back->provider == r.provider && back->version == r.version &&
                    back->capabilities == r.capabilities && back->healthy == r.healthy,
                "the registration reads back different");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const int which = data[0] % 3;
    const auto* bytes = data + 1;
    const int n = static_cast<int>(size - 1);
    IdentityAnswer answer = before();
    if (which == 0) {
        csi::v1::ProbeResponse reply;
        if (!reply.ParseFromArray(bytes, n)) return 0;
        takeProbe(reply, answer);
        fuzz::check(answer.ready == (!reply.has_ready() || reply.ready().value()), "ready is not what the probe said");
        fuzz::check(answer.ready == answer.message.empty(), "a message with ready, or none without");
    } else if (which == 1) {
        csi::v1::GetPluginInfoResponse reply;
        if (!reply.ParseFromArray(bytes, n)) return 0;
        auto got = takePluginInfo(reply, answer);
        if (!got) {
            fuzz::check(got.error().name == "PluginFailed" && !got.error().message.empty(),
                        "an error without name or message");
            fuzz::check(same(answer, before()), "a refused GetPluginInfo changed the answer");
            return 0;
        }
        fuzz::check(answer.provider == reply.name() && answer.version == reply.vendor_version(),
                    "the provider or version is not the reply's");
    } else {
        csi::v1::GetPluginCapabilitiesResponse reply;
        if (!reply.ParseFromArray(bytes, n)) return 0;
        takeCapabilities(reply, answer);
        fuzz::check(answer.capabilities.size() <= static_cast<size_t>(reply.capabilities_size()),
                    "more capabilities than the reply has");
    }
    registers(answer);

    csi::v1::GetPluginInfoResponse good;
    good.set_name("org.taskscope.test-csi");
    good.set_vendor_version("1.2.3");
    IdentityAnswer fresh;
    fuzz::check(takePluginInfo(good, fresh).ok() && fresh.provider == "org.taskscope.test-csi",
                "a good answer no longer converts after this input");
    return 0;
}
