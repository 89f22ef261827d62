#define BOOST_TEST_MODULE config
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <fstream>

#include "manager/daemon/config_file.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::manager;

namespace {

struct TempDir : taskscope::test::TempDir {
    void write(const std::string& rel, const std::string& text) const { std::ofstream(path + "/" + rel) << text; }
};

}  // namespace

BOOST_AUTO_TEST_CASE(defaults_without_files) {
    TempDir d;
    auto c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->slice == "nomad.slice");
    BOOST_TEST(c->stateDir == "/var/lib/taskscope");
}

BOOST_AUTO_TEST_CASE(dropins_override_in_name_order) {
    TempDir d;
    d.write("manager.json", R"({"slice":"a.slice","job_timeout_ms":5000})");
    ::mkdir((d.path + "/manager.json.d").c_str(), 0755);
    d.write("manager.json.d/20-b.json", R"({"slice":"b.slice"})");
    d.write("manager.json.d/10-c.json", R"({"slice":"c.slice","state_dir":"/srv/ts"})");
    d.write("manager.json.d/ignored.txt", "garbage");
    auto c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? std::string() : c.error().message));
    BOOST_TEST(c->slice == "b.slice");
    BOOST_TEST(c->stateDir == "/srv/ts");
    BOOST_TEST(c->jobTimeoutMs == 5000);
}

BOOST_AUTO_TEST_CASE(bad_keys_and_values_name_the_file) {
    TempDir d;
    d.write("manager.json", R"({"slise":"a.slice"})");
    auto c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(!c.ok());
    BOOST_TEST(c.error().name == "InvalidConfig");
    BOOST_TEST(c.error().message.find("unknown key slise") != std::string::npos);
    d.write("manager.json", R"({"slice":"not a slice"})");
    BOOST_TEST(!loadConfig(d.path + "/manager.json").ok());
}

BOOST_AUTO_TEST_CASE(dangling_scope_keys) {
    TempDir d;
    auto c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->danglingScopes.enabled);
    BOOST_TEST(!c->danglingScopes.dryRun);
    BOOST_TEST(c->danglingScopes.period.count() == 300000);
    BOOST_TEST(c->danglingScopes.creationGrace.count() == 300000);
    d.write("manager.json", R"({"dangling_scopes_enabled":false,"dangling_scopes_dry_run":true,
        "dangling_scopes_period_ms":5000,"dangling_scopes_creation_grace_ms":0})");
    c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(!c->danglingScopes.enabled);
    BOOST_TEST(c->danglingScopes.dryRun);
    BOOST_TEST(c->danglingScopes.period.count() == 5000);
    BOOST_TEST(c->danglingScopes.creationGrace.count() == 0);
    for (const char* bad : {R"({"dangling_scopes_period_ms":999})", R"({"dangling_scopes_creation_grace_ms":-1})",
                            R"({"dangling_scopes_dry_run":"yes"})", R"({"dangling_scopes_enabled":1})",
                            R"({"dangling_scopes_grace_ms":5000})"}) {
        d.write("manager.json", bad);
        auto r = loadConfig(d.path + "/manager.json");
        BOOST_TEST(!r.ok(), bad);
        if (!r.ok()) BOOST_TEST(r.error().name == "InvalidConfig");
    }
}

// issue 59: the node's default copy to the journal, and where journald's
// stream socket is (tests point it elsewhere).
BOOST_AUTO_TEST_CASE(journal_keys) {
    TempDir d;
    auto c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(!c->logJournal);
    BOOST_TEST(c->journalSocket == "/run/systemd/journal/stdout");
    d.write("manager.json", R"({"log_journal":true,"journal_socket":"/tmp/j/stdout"})");
    c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? std::string() : c.error().message));
    BOOST_TEST(c->logJournal);
    BOOST_TEST(c->journalSocket == "/tmp/j/stdout");
    for (const char* bad : {R"({"log_journal":"yes"})", R"({"journal_socket":"run/x"})", R"({"journal_socket":1})"}) {
        d.write("manager.json", bad);
        auto r = loadConfig(d.path + "/manager.json");
        BOOST_TEST(!r.ok(), bad);
        if (!r.ok()) BOOST_TEST(r.error().name == "InvalidConfig");
    }
}

BOOST_AUTO_TEST_CASE(network_directories) {
    TempDir d;
    d.write("manager.json", R"({"network_netns_dir":"/tmp/x/netns","network_ipam_dir":"/tmp/x/ipam"})");
    auto c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? std::string() : c.error().message));
    BOOST_TEST(c->network.netnsDir == "/tmp/x/netns");
    BOOST_TEST(c->network.ipamDir == "/tmp/x/ipam");
    for (const char* bad : {R"({"network_netns_dir":"/"})", R"({"network_netns_dir":"run/netns"})",
                            R"({"network_ipam_dir":7})"}) {
        d.write("manager.json", bad);
        BOOST_TEST(!loadConfig(d.path + "/manager.json").ok(), bad);
    }
}

BOOST_AUTO_TEST_CASE(default_pids_max_key) {
    TempDir d;
    auto c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->defaultPidsMax == kDefaultPidsMax);
    d.write("manager.json", R"({"default_pids_max":0})");
    c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->defaultPidsMax == 0u);
    d.write("manager.json", R"({"default_pids_max":-1})");
    BOOST_TEST(!loadConfig(d.path + "/manager.json").ok());
    d.write("manager.json", R"({"default_pids_max":"4096"})");
    BOOST_TEST(!loadConfig(d.path + "/manager.json").ok());
}

BOOST_AUTO_TEST_CASE(nested_layout_keys) {
    TempDir d;
    auto c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->nestedSlices);
    BOOST_TEST(c->bucketFanout == 64u);
    d.write("manager.json", R"({"nested_slices":false,"bucket_fanout":16})");
    c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(!c->nestedSlices);
    BOOST_TEST(c->bucketFanout == 16u);
    // Two hex digits name a bucket: 1..256.
    for (const char* bad : {R"({"bucket_fanout":0})", R"({"bucket_fanout":257})"}) {
        d.write("manager.json", bad);
        auto r = loadConfig(d.path + "/manager.json");
        BOOST_REQUIRE(!r.ok());
        BOOST_TEST(r.error().message.find("bucket_fanout") != std::string::npos);
    }
    BOOST_TEST(c->scopesPerSlice == 100u);
    d.write("manager.json", R"({"scopes_per_slice":2})");
    c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->scopesPerSlice == 2u);
    for (const char* bad : {R"({"scopes_per_slice":0})", R"({"scopes_per_slice":10001})"}) {
        d.write("manager.json", bad);
        auto r = loadConfig(d.path + "/manager.json");
        BOOST_REQUIRE(!r.ok());
        BOOST_TEST(r.error().message.find("scopes_per_slice") != std::string::npos);
    }
    BOOST_TEST(c->sliceWeightInterval == std::chrono::milliseconds(1000));
    d.write("manager.json", R"({"slice_weight_interval_ms":0})");
    c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->sliceWeightInterval == std::chrono::milliseconds(0));
    d.write("manager.json", R"({"slice_weight_interval_ms":-1})");
    BOOST_TEST(!loadConfig(d.path + "/manager.json").ok());
    d.write("manager.json", "{}");
    c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->sliceWeightNodeInterval == std::chrono::milliseconds(250));
    d.write("manager.json", R"({"slice_weight_node_interval_ms":0})");
    c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->sliceWeightNodeInterval == std::chrono::milliseconds(0));
    d.write("manager.json", R"({"slice_weight_node_interval_ms":60001})");
    auto r = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message.find("slice_weight_node_interval_ms") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(stop_window_key) {
    TempDir d;
    auto c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->stopWindow == 64u);
    d.write("manager.json", R"({"stop_window":0})");
    c = loadConfig(d.path + "/manager.json");
    BOOST_REQUIRE(c.ok());
    BOOST_TEST(c->stopWindow == 0u);  // off: every stop at once
    for (const char* bad : {R"({"stop_window":-1})", R"({"stop_window":100001})", R"({"stop_window":"64"})"}) {
        d.write("manager.json", bad);
        auto r = loadConfig(d.path + "/manager.json");
        BOOST_REQUIRE(!r.ok());
        BOOST_TEST(r.error().message.find("stop_window") != std::string::npos);
    }
}
