#define BOOST_TEST_MODULE node_task_config
#include <boost/test/unit_test.hpp>

#include "nomad/devices_network.hpp"
#include "nomad/node_task_config.hpp"

using namespace taskscope;
using namespace taskscope::nomad;
using nlohmann::json;

namespace {

spec::TaskSpec with(const std::string& key, const json& value) {
    spec::TaskSpec s;
    auto r = addNodeTaskKey(key, value, s);
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    return s;
}

void refused(const std::string& key, const json& value, const std::string& says) {
    spec::TaskSpec s;
    auto r = addNodeTaskKey(key, value, s);
    BOOST_REQUIRE_MESSAGE(!r.ok(), key + " " + value.dump());
    BOOST_TEST(r.error().name == "InvalidConfig");
    BOOST_TEST(r.error().message.find(says) != std::string::npos, r.error().message);
}

}  // namespace

BOOST_AUTO_TEST_CASE(keys_and_their_types) {
    for (const char* k : {"ulimit", "oom_score_adj", "io_weight", "device_read_bps", "device_write_bps",
                          "device_read_iops", "device_write_iops"})
        BOOST_TEST(isNodeTaskKey(k), k);
    BOOST_TEST(!isNodeTaskKey("command"));
    BOOST_TEST(nodeTaskKeys().size() == 7u);
}

BOOST_AUTO_TEST_CASE(ulimit_as_docker_writes_it) {
    auto s = with("ulimit", json{{"nofile", "65536:65536"}, {"core", "0"}, {"memlock", "unlimited"}});
    BOOST_TEST((s.ulimits.at("nofile") == spec::Ulimit{65536, 65536}));
    BOOST_TEST((s.ulimits.at("core") == spec::Ulimit{0, 0}));
    BOOST_TEST((s.ulimits.at("memlock") == spec::Ulimit{spec::kUnlimited, spec::kUnlimited}));
    refused("ulimit", json{{"nofile", "20:10"}}, "config.ulimit.nofile: soft limit 20 is above hard limit 10");
    refused("ulimit", json{{"open_files", "1"}}, "config.ulimit: unknown limit 'open_files'");
    refused("ulimit", json{{"nofile", "lots"}}, "config.ulimit.nofile: soft limit 'lots'");
    refused("ulimit", json::array(), "config.ulimit must be a map");
}

BOOST_AUTO_TEST_CASE(oom_score_adj_as_raw_exec_takes_it) {
    BOOST_TEST(with("oom_score_adj", 500).oomScoreAdj == 500);
    BOOST_TEST(with("oom_score_adj", 0.0).oomScoreAdj == 0);  // cty numbers may come as floats
    refused("oom_score_adj", -1, "config.oom_score_adj must not be negative");
    refused("oom_score_adj", 1001, "at most 1000");
    refused("oom_score_adj", "x", "config.oom_score_adj must be a whole number");
}

BOOST_AUTO_TEST_CASE(io_keys) {
    BOOST_TEST(*with("io_weight", 100).resources.ioWeight == 100u);
    refused("io_weight", 0, "config.io_weight is 0, outside 1..10000");
    auto bps = with("device_read_bps", json{{"/dev/vda", "10M"}, {"/dev/vdb", "4096"}});
    BOOST_TEST(bps.resources.ioReadBps.at("/dev/vda") == 10u << 20);
    BOOST_TEST(bps.resources.ioReadBps.at("/dev/vdb") == 4096u);
    BOOST_TEST(with("device_write_bps", json{{"/dev/vda", "1gb"}}).resources.ioWriteBps.at("/dev/vda") == 1u << 30);
    BOOST_TEST(with("device_read_iops", json{{"/dev/vda", 100}}).resources.ioReadIops.at("/dev/vda") == 100u);
    BOOST_TEST(with("device_write_iops", json{{"/dev/vda", 5}}).resources.ioWriteIops.at("/dev/vda") == 5u);
    refused("device_read_bps", json{{"sda", "1M"}},
            "config.device_read_bps: \"sda\" must be a block device under /dev/");
    refused("device_read_bps", json{{"/dev/vda", "1X"}},
            "config.device_read_bps[\"/dev/vda\"]: \"1X\" has an unknown unit");
    refused("device_read_bps", json{{"/dev/vda", "0"}}, "config.device_read_bps[\"/dev/vda\"] must be positive");
    refused("device_write_iops", json{{"/dev/vda", 0}}, "config.device_write_iops[\"/dev/vda\"] must be positive");
    refused("device_write_iops", json{{"/dev/vda", "many"}},
            "config.device_write_iops[\"/dev/vda\"] must be a whole number");
}

// What the keys take, the manager's spec takes too
// (fuzz/corpus/node_task_keys/review-*).
BOOST_AUTO_TEST_CASE(io_keys_keep_to_the_spec_and_a_refused_map_sets_nothing) {
    json many = json::object();
    for (char c = 'a'; c <= 'q'; ++c) many[std::string("/dev/vd") + c] = 100;
    refused("device_read_iops", many, "config.device_read_iops names 17 devices, more than 16");
    refused("device_write_bps", json{{"/dev/vda", "9000000T"}},
            "config.device_write_bps[\"/dev/vda\"]: \"9000000T\" is more than 9223372036854775807 bytes per second");
    spec::TaskSpec s;
    BOOST_REQUIRE(!addNodeTaskKey("device_read_bps", json{{"/dev/vda", "1M"}, {"x", "1"}}, s).ok());
    BOOST_TEST(s.resources.ioReadBps.empty());
}

BOOST_AUTO_TEST_CASE(byte_rates) {
    BOOST_TEST(*parseByteRate("1") == 1u);
    BOOST_TEST(*parseByteRate("1k") == 1024u);
    BOOST_TEST(*parseByteRate("1KB") == 1024u);
    BOOST_TEST(*parseByteRate("2m") == 2u << 20);
    BOOST_TEST(*parseByteRate("1T") == uint64_t{1} << 40);
    BOOST_TEST(!parseByteRate(""));
    BOOST_TEST(!parseByteRate("M"));
    BOOST_TEST(!parseByteRate("1 M"));
    BOOST_TEST(!parseByteRate("1mbb"));
    BOOST_TEST(!parseByteRate("99999999999999999999"));
    BOOST_TEST(!parseByteRate("99999999999T"));
}

// issue 47: the group network's dns and hosts, for an isolated task in it only.
BOOST_AUTO_TEST_CASE(network_files_for_a_task_in_the_group_network) {
    namespace pb = hashicorp::nomad::plugins::drivers::proto;
    pb::TaskConfig cfg;
    cfg.mutable_dns()->add_servers("10.0.0.53");
    cfg.mutable_dns()->add_options("ndots:2");
    auto* n = cfg.mutable_network_isolation_spec();
    n->set_mode(pb::NetworkIsolationSpec::GROUP);
    n->mutable_hostsconfig()->set_hostname("web");
    n->mutable_hostsconfig()->set_address("172.26.64.9");
    spec::TaskSpec s;
    addNetworkFiles(cfg, true, s);
    BOOST_REQUIRE(s.dns);
    BOOST_TEST(s.dns->servers.at(0) == "10.0.0.53");
    BOOST_TEST(s.dns->searches.empty());
    BOOST_REQUIRE(s.hosts);
    BOOST_TEST(s.hosts->address == "172.26.64.9");
    spec::TaskSpec none;
    addNetworkFiles(cfg, false, none);  // raw_exec-style: the host's files
    BOOST_TEST(!none.dns);
    BOOST_TEST(!none.hosts);
    n->set_mode(pb::NetworkIsolationSpec::HOST);
    spec::TaskSpec host;
    addNetworkFiles(cfg, true, host);  // the host's network: the host's files
    BOOST_TEST(!host.dns);
    n->set_mode(pb::NetworkIsolationSpec::GROUP);
    n->mutable_hostsconfig()->set_address("");  // no address from Nomad: no entry
    spec::TaskSpec noAddress;
    addNetworkFiles(cfg, true, noAddress);
    BOOST_TEST(!noAddress.hosts);
    BOOST_TEST(allocHostname("0123456789abcdef", "") == "01234567");
    BOOST_TEST(allocHostname("0123456789abcdef", "web") == "web");
}
