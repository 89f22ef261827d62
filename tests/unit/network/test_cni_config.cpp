#define BOOST_TEST_MODULE cni_config
#include <boost/test/unit_test.hpp>

#include "network/cni_config.hpp"

using namespace taskscope::network;
using nlohmann::json;

BOOST_AUTO_TEST_CASE(default_chain_is_nomads) {
    NodeNetworkConfig node;
    node.subnet = "10.9.0.0/24";
    const auto c = defaultConflist(node);
    BOOST_TEST(c["name"] == "taskscope");
    const auto& p = c["plugins"];
    BOOST_REQUIRE(p.size() == 4u);
    BOOST_TEST(p[0]["type"] == "loopback");
    BOOST_TEST(p[1]["type"] == "bridge");
    BOOST_TEST(p[1]["bridge"] == "nomad");
    BOOST_TEST(p[1]["ipMasq"] == true);
    BOOST_TEST(p[1]["isGateway"] == true);
    BOOST_TEST(p[1]["hairpinMode"] == true);
    BOOST_TEST(p[1]["ipam"]["type"] == "host-local");
    BOOST_TEST(p[1]["ipam"]["ranges"][0][0]["subnet"] == "10.9.0.0/24");
    BOOST_TEST(p[2]["type"] == "firewall");
    BOOST_TEST(p[3]["type"] == "portmap");
    BOOST_TEST(p[3]["snat"] == true);
    BOOST_TEST(p[3]["capabilities"]["portMappings"] == true);
}

BOOST_AUTO_TEST_CASE(plugin_input_carries_name_version_prev_result_and_ports) {
    const auto c = defaultConflist({});
    const json prev = {{"cniVersion", "0.4.0"}, {"ips", json::array()}};
    const auto in = pluginInput(c, c["plugins"][3], prev, {{8080, 80, "tcp"}});
    BOOST_TEST(in["name"] == "taskscope");
    BOOST_TEST(in["cniVersion"] == "0.4.0");
    BOOST_TEST(in["prevResult"] == prev);
    BOOST_TEST(in["runtimeConfig"]["portMappings"][0]["hostPort"] == 8080);
    BOOST_TEST(in["runtimeConfig"]["portMappings"][0]["containerPort"] == 80);
    BOOST_TEST(in["runtimeConfig"]["portMappings"][0]["protocol"] == "tcp");
    // Only a plugin that declares the capability gets the mappings; the
    // first one gets no prevResult at all.
    const auto first = pluginInput(c, c["plugins"][1], json(), {{8080, 80, "tcp"}});
    BOOST_TEST(!first.contains("runtimeConfig"));
    BOOST_TEST(!first.contains("prevResult"));
    BOOST_TEST(first["type"] == "bridge");
}

BOOST_AUTO_TEST_CASE(result_addresses) {
    auto r = parseCniResult(R"({"cniVersion":"0.4.0","interfaces":[{"name":"nomad"},{"name":"veth1"},
        {"name":"eth0","sandbox":"/run/netns/a"}],"ips":[{"version":"4","interface":2,
        "address":"172.26.64.2/20","gateway":"172.26.64.1"}],"routes":[{"dst":"0.0.0.0/0"}],"dns":{}})");
    BOOST_REQUIRE(r.ok());
    BOOST_REQUIRE(r->addresses.size() == 1u);
    BOOST_TEST(r->addresses[0] == "172.26.64.2/20");
    BOOST_TEST(!parseCniResult("not json").ok());
}

BOOST_AUTO_TEST_CASE(error_document) {
    auto e = cniError("bridge", "ADD", R"({"cniVersion":"0.4.0","code":11,"msg":"failed to allocate","details":"range full"})",
                      "", 1);
    BOOST_TEST(e.name == "CniFailed");
    BOOST_TEST(e.message.find("failed to allocate") != std::string::npos);
    BOOST_TEST(e.message.find("range full") != std::string::npos);
    BOOST_TEST(e.message.find("code 11") != std::string::npos);
    auto plain = cniError("bridge", "DEL", "", "panic: boom", 2);
    BOOST_TEST(plain.message.find("exit status 2") != std::string::npos);
    BOOST_TEST(plain.message.find("panic: boom") != std::string::npos);
    // A "msg" that is not a string (found by fuzz/cni_result) threw
    // nlohmann's type_error; now it is plain output, with stderr and status.
    auto odd = cniError("bridge", "ADD", R"({"ier"	:11,"msg":11})", "bad msg", 1);
    BOOST_TEST(odd.name == "CniFailed");
    BOOST_TEST(odd.message.find("exit status 1") != std::string::npos);
    BOOST_TEST(odd.message.find("bad msg") != std::string::npos);
    auto longMsg = cniError("bridge", "ADD", R"({"msg":")" + std::string(5000, 'x') + R"("})", "", 1);
    BOOST_TEST(longMsg.message.size() < 700u);
}
