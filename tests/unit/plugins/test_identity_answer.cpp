#define BOOST_TEST_MODULE identity_answer
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "csi_identity.pb.h"
#include "plugins/identity_answer.hpp"

using namespace taskscope::plugins;

BOOST_AUTO_TEST_CASE(probe_unset_is_ready) {
    IdentityAnswer a;
    takeProbe(csi::v1::ProbeResponse{}, a);
    BOOST_TEST(a.ready);
    csi::v1::ProbeResponse no;
    no.mutable_ready()->set_value(false);
    takeProbe(no, a);
    BOOST_TEST(!a.ready);
    BOOST_TEST(a.message == "Probe: the plugin says it is not ready");
}

BOOST_AUTO_TEST_CASE(plugin_info_takes_a_csi_name_and_a_bounded_version) {
    IdentityAnswer a;
    csi::v1::GetPluginInfoResponse r;
    r.set_name("org.taskscope.test-csi");
    r.set_vendor_version("1.2.3");
    BOOST_REQUIRE(takePluginInfo(r, a).ok());
    BOOST_TEST(a.provider == "org.taskscope.test-csi");
    BOOST_TEST(a.version == "1.2.3");
    // fuzz/corpus/csi_answers/review-*: each refused, the answer as it was.
    for (const std::string& bad : std::vector<std::string>{"", "-x", "x.", "a b", std::string(64, 'a')}) {
        csi::v1::GetPluginInfoResponse b;
        b.set_name(bad);
        auto e = takePluginInfo(b, a);
        BOOST_REQUIRE(!e);
        BOOST_TEST(e.error().name == "PluginFailed");
        BOOST_TEST(a.provider == "org.taskscope.test-csi");
    }
    BOOST_TEST(isProviderName(std::string(63, 'a')));
    csi::v1::GetPluginInfoResponse longVersion;
    longVersion.set_name("csi.example.com");
    longVersion.set_vendor_version(std::string(257, 'v'));
    auto e = takePluginInfo(longVersion, a);
    BOOST_REQUIRE(!e);
    BOOST_TEST(e.error().message == "GetPluginInfo: vendor_version is 257 bytes long, more than 256");
}

BOOST_AUTO_TEST_CASE(capabilities_are_named_once_and_unknown_numbers_are_unknown) {
    csi::v1::GetPluginCapabilitiesResponse r;
    for (int i = 0; i < 3; ++i)
        r.add_capabilities()->mutable_service()->set_type(csi::v1::PluginCapability_Service_Type_CONTROLLER_SERVICE);
    r.add_capabilities()->mutable_service()->set_type(static_cast<csi::v1::PluginCapability_Service_Type>(99));
    r.add_capabilities()->mutable_volume_expansion()->set_type(csi::v1::PluginCapability_VolumeExpansion_Type_ONLINE);
    r.add_capabilities()->mutable_volume_expansion()->set_type(
        static_cast<csi::v1::PluginCapability_VolumeExpansion_Type>(7));
    r.add_capabilities();
    IdentityAnswer a;
    takeCapabilities(r, a);
    BOOST_TEST(
        (a.capabilities == std::vector<std::string>{"CONTROLLER_SERVICE", "UNKNOWN", "VOLUME_EXPANSION_ONLINE"}));
}
