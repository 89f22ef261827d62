#define BOOST_TEST_MODULE plugin_spec
#include <boost/test/unit_test.hpp>

#include "spec/task_spec.hpp"

using nlohmann::json;
using taskscope::spec::parsePluginSpec;
using taskscope::spec::parseTaskSpec;
using taskscope::spec::pluginHostDir;

BOOST_AUTO_TEST_CASE(defaults_follow_nomad_s_csi_plugin_stanza) {
    auto p = parsePluginSpec(json{{"type", "csi"}, {"name", "hostpath"}});
    BOOST_REQUIRE(p);
    BOOST_TEST(p->mountDir == "/csi");
    BOOST_TEST(p->socket == "csi.sock");
    BOOST_TEST(p->healthIntervalMs == 30000);
    BOOST_TEST(p->socketTimeoutMs == 60000);
    BOOST_TEST(pluginHostDir("/var/lib/taskscope/plugins", *p) == "/var/lib/taskscope/plugins/csi/hostpath");
}

BOOST_AUTO_TEST_CASE(every_field_is_read) {
    auto p = parsePluginSpec(json{{"type", "csi"},
                                  {"name", "ebs.v1"},
                                  {"mount_dir", "/plugin"},
                                  {"socket", "s.sock"},
                                  {"health_interval_ms", 500},
                                  {"socket_timeout_ms", 2000}});
    BOOST_REQUIRE(p);
    BOOST_TEST(p->name == "ebs.v1");
    BOOST_TEST(p->mountDir == "/plugin");
    BOOST_TEST(p->socket == "s.sock");
    BOOST_TEST(p->healthIntervalMs == 500);
    BOOST_TEST(p->socketTimeoutMs == 2000);
}

BOOST_AUTO_TEST_CASE(bad_plugins_are_invalid_specs) {
    const json bad[] = {
        json::array(),
        json{{"name", "x"}},                        // no type
        json{{"type", "csi"}},                      // no name
        json{{"type", "device"}, {"name", "x"}},    // unknown type
        json{{"type", "csi"}, {"name", "../etc"}},  // a path, not a name
        json{{"type", "csi"}, {"name", "a/b"}},
        json{{"type", "csi"}, {"name", ""}},
        json{{"type", "csi"}, {"name", std::string(49, 'a')}},
        json{{"type", "csi"}, {"name", "x"}, {"socket", "a/b.sock"}},
        json{{"type", "csi"}, {"name", "x"}, {"mount_dir", "relative"}},
        json{{"type", "csi"}, {"name", "x"}, {"mount_dir", "/a/../b"}},
        json{{"type", "csi"}, {"name", "x"}, {"health_interval_ms", 0}},
        json{{"type", "csi"}, {"name", "x"}, {"health_interval_ms", "1000"}},
        json{{"type", "csi"}, {"name", "x"}, {"socket_timeout_ms", -1}},
        json{{"type", "csi"}, {"name", "x"}, {"extra", 1}},
    };
    for (const auto& b : bad) {
        auto p = parsePluginSpec(b);
        BOOST_TEST_CONTEXT(b.dump()) {
            BOOST_TEST(!p);
            if (!p) BOOST_TEST(p.error().name == "InvalidSpec");
        }
    }
}

BOOST_AUTO_TEST_CASE(a_spec_tells_its_plugin) {
    BOOST_TEST(!parseTaskSpec(R"({"command":"/bin/true"})")->plugin);
    BOOST_TEST(!parseTaskSpec("not json"));
    auto s = parseTaskSpec(R"({"command":"/bin/true","plugin":{"type":"csi","name":"n"}})");
    BOOST_REQUIRE(s);
    BOOST_REQUIRE(s->plugin);
    BOOST_TEST(s->plugin->name == "n");
}
