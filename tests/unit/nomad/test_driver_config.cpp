#define BOOST_TEST_MODULE driver_config
#include <boost/test/unit_test.hpp>

#include "nomad/driver_config.hpp"
#include "spec/isolation.hpp"

using namespace taskscope::nomad;
using nlohmann::json;

namespace {
CapSet cap(const char* name) { return CapSet{1} << taskscope::spec::capabilityNumber(name); }
}  // namespace

// Nothing said: exec's defaults, and taskscope's own.
BOOST_AUTO_TEST_CASE(defaults) {
    auto c = parseDriverConfig(json::object());
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->enabled);
    BOOST_TEST((c->defaultIsolation == FsMode::Chroot));
    BOOST_TEST(!c->noPivotRoot);
    BOOST_TEST(!c->defaultPidHost);
    BOOST_TEST(!c->defaultIpcHost);
    BOOST_TEST(c->allowCaps == nomadDefaultCaps());
    BOOST_TEST(c->deniedHostUids.empty());
    BOOST_TEST(c->deniedEnvvars.empty());
    BOOST_TEST(c->dynamicWorkloadUsers);
    BOOST_TEST(capNames(nomadDefaultCaps()).size() == 13u);
    // Null attributes (what Nomad sends for keys without a default) are defaults.
    c = parseDriverConfig(json{{"denied_host_uids", nullptr}, {"enabled", true}});
    BOOST_REQUIRE(c.ok());
}

// An exec plugin block and a raw_exec one, as operators write them.
BOOST_AUTO_TEST_CASE(exec_and_raw_exec_blocks) {
    auto c = parseDriverConfig(json{{"no_pivot_root", false},
                                    {"default_pid_mode", "host"},
                                    {"default_ipc_mode", "private"},
                                    {"allow_caps", {"chown", "CAP_KILL", "net_raw"}},
                                    {"denied_host_uids", "0,10-20"},
                                    {"denied_host_gids", "0"}});
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->defaultPidHost);
    BOOST_TEST(!c->defaultIpcHost);
    BOOST_TEST(c->allowCaps == (cap("CHOWN") | cap("KILL") | cap("NET_RAW")));
    BOOST_TEST(c->deniedHostUids.contains(15));
    BOOST_TEST(c->deniedHostGids.contains(0));
    c = parseDriverConfig(json{{"enabled", true}, {"denied_envvars", {"AWS_*", "SECRET"}}});
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->deniedEnvvars.size() == 2u);
    c = parseDriverConfig(json{{"allow_caps", {"all"}}, {"dynamic_workload_users", false}});
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->allowCaps == allKnownCaps());
    BOOST_TEST(!c->dynamicWorkloadUsers);
}

// Each refused naming its key, as exec's SetConfig refuses it.
BOOST_AUTO_TEST_CASE(bad_values_name_the_key) {
    const std::pair<json, const char*> bad[] = {
        {json{{"default_pid_mode", "bogus"}}, "default_pid_mode"},
        {json{{"default_ipc_mode", "shared"}}, "default_ipc_mode"},
        {json{{"allow_caps", {"chown", "net_bogus"}}}, "allow_caps"},
        {json{{"denied_host_uids", "0,20-10"}}, "denied_host_uids"},
        {json{{"denied_host_gids", "x"}}, "denied_host_gids"},
        {json{{"no_pivot_root", "yes"}}, "no_pivot_root"},
        {json{{"default_isolation", "vm"}}, "default_isolation"},
        {json{{"denid_host_uids", "0"}}, "denid_host_uids"},  // misspelt
    };
    for (const auto& [config, key] : bad) {
        auto c = parseDriverConfig(config);
        BOOST_REQUIRE_MESSAGE(!c.ok(), config.dump());
        BOOST_TEST(c.error().name == "InvalidConfig");
        BOOST_TEST(c.error().message.find(key) != std::string::npos, c.error().message);
    }
    BOOST_TEST(parseDriverConfig(json{{"allow_caps", {"net_bogus"}}}).error().message.find("net_bogus") !=
               std::string::npos);
}
