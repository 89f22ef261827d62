#define BOOST_TEST_MODULE cni_exec
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "network/cni_config.hpp"
#include "network/cni_exec.hpp"

using namespace taskscope::network;
namespace fs = std::filesystem;

// Plugins written as shell scripts that follow the exec protocol: they
// show what the runner hands over (environment, stdin) and how it takes
// results, error documents and a plugin that hangs.
struct PluginDir {
    fs::path dir = fs::temp_directory_path() / ("cni-test-" + std::to_string(::getpid()));
    PluginDir() { fs::create_directories(dir); }
    ~PluginDir() { fs::remove_all(dir); }
    void add(const std::string& name, const std::string& body) {
        const auto p = dir / name;
        std::ofstream(p) << "#!/bin/sh\n" << body;
        ::chmod(p.c_str(), 0755);
    }
    CniCall call(const std::string& cmd) const {
        CniCall c;
        c.command = cmd;
        c.containerId = "a1";
        c.netns = "/run/netns/a1";
        c.cniPath = dir.string();
        c.timeout = std::chrono::milliseconds(2000);
        return c;
    }
};

BOOST_AUTO_TEST_CASE(chain_add_passes_env_stdin_and_prev_result) {
    PluginDir d;
    // first: echoes a result naming its env; second: returns its prevResult's ips plus what it saw.
    d.add("first", "cat >/dev/null; echo \"{\\\"cniVersion\\\":\\\"0.4.0\\\",\\\"ips\\\":[{\\\"address\\\":\\\"10.0.0.2/24\\\"}],"
                   "\\\"env\\\":\\\"$CNI_COMMAND $CNI_CONTAINERID $CNI_NETNS $CNI_IFNAME\\\"}\"\n");
    d.add("second", "in=$(cat); echo \"$in\" > \"$(dirname \"$0\")/second.in\"; "
                    "echo '{\"cniVersion\":\"0.4.0\",\"ips\":[{\"address\":\"10.0.0.2/24\"}]}'\n");
    nlohmann::json conflist = {{"cniVersion", "0.4.0"},
                               {"name", "t"},
                               {"plugins", {{{"type", "first"}}, {{"type", "second"}, {"capabilities", {{"portMappings", true}}}}}}};
    auto r = runChain(d.call("ADD"), conflist, {{8080, 80, "tcp"}});
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    std::ifstream in(d.dir / "second.in");
    auto seen = nlohmann::json::parse(in);
    BOOST_TEST(seen["prevResult"]["env"] == "ADD a1 /run/netns/a1 eth0");
    BOOST_TEST(seen["name"] == "t");
    BOOST_TEST(seen["runtimeConfig"]["portMappings"][0]["hostPort"] == 8080);
    BOOST_TEST((*r)["ips"][0]["address"] == "10.0.0.2/24");
}

BOOST_AUTO_TEST_CASE(error_document_becomes_cni_failed) {
    PluginDir d;
    d.add("bad", "cat >/dev/null; echo '{\"code\":7,\"msg\":\"invalid network config\"}'; exit 1\n");
    auto r = runPlugin(d.call("ADD"), "bad", nlohmann::json::object());
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "CniFailed");
    BOOST_TEST(r.error().message.find("invalid network config") != std::string::npos);
    BOOST_TEST(r.error().message.find("code 7") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(hung_plugin_is_killed) {
    PluginDir d;
    d.add("hang", "exec sleep 30\n");
    auto c = d.call("ADD");
    c.timeout = std::chrono::milliseconds(300);
    const auto t0 = std::chrono::steady_clock::now();
    auto r = runPlugin(c, "hang", nlohmann::json::object());
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "CniFailed");
    BOOST_TEST(r.error().message.find("killed") != std::string::npos);
    BOOST_TEST((std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5)));
}

BOOST_AUTO_TEST_CASE(del_runs_every_plugin_in_reverse_past_a_failure) {
    PluginDir d;
    d.add("p1", "cat >/dev/null; echo p1 >> \"$(dirname \"$0\")/order\"; exit 0\n");
    d.add("p2", "cat >/dev/null; echo p2 >> \"$(dirname \"$0\")/order\"; echo '{\"code\":11,\"msg\":\"gone\"}'; exit 1\n");
    nlohmann::json conflist = {{"cniVersion", "0.4.0"}, {"name", "t"}, {"plugins", {{{"type", "p1"}}, {{"type", "p2"}}}}};
    auto r = runChain(d.call("DEL"), conflist, {}, nlohmann::json::object());
    BOOST_TEST(!r.ok());
    std::ifstream in(d.dir / "order");
    std::string a, b;
    in >> a >> b;
    BOOST_TEST(a == "p2");
    BOOST_TEST(b == "p1");
}

BOOST_AUTO_TEST_CASE(missing_plugin) {
    PluginDir d;
    auto r = runPlugin(d.call("ADD"), "nosuch", nlohmann::json::object());
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "CniFailed");
    BOOST_TEST(!runPlugin(d.call("ADD"), "../x", nlohmann::json::object()).ok());
}

BOOST_AUTO_TEST_CASE(check_leaves_out_portmap_without_ipv6) {
    // containernetworking/plugins#819: portmap's CHECK wants ip6tables rules
    // it never made for an IPv4-only container.
    PluginDir d;
    d.add("portmap", "cat >/dev/null; echo '{\"code\":999,\"msg\":\"could not check ipv6 dnat\"}'; exit 1\n");
    d.add("ok", "cat >/dev/null; exit 0\n");
    nlohmann::json conflist = {{"cniVersion", "0.4.0"}, {"name", "t"}, {"plugins", {{{"type", "ok"}}, {{"type", "portmap"}}}}};
    const nlohmann::json v4 = {{"ips", {{{"address", "172.26.64.2/20"}}}}};
    const nlohmann::json v6 = {{"ips", {{{"address", "172.26.64.2/20"}}, {{"address", "fd00::2/64"}}}}};
    BOOST_TEST(runChain(d.call("CHECK"), conflist, {}, v4).ok());
    BOOST_TEST(!runChain(d.call("CHECK"), conflist, {}, v6).ok());
}
