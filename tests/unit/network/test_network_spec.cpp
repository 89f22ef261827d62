#define BOOST_TEST_MODULE network_spec
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "network/network_spec.hpp"

using namespace taskscope::network;
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_CASE(empty_is_mode_none) {
    auto s = parseNetworkSpec("");
    BOOST_REQUIRE(s.ok());
    BOOST_TEST((s->mode == Mode::None));
    BOOST_TEST(s->ports.empty());
}

BOOST_AUTO_TEST_CASE(bridge_with_ports) {
    auto s = parseNetworkSpec(
        R"({"mode":"bridge","ports":[{"host_port":8080,"container_port":80},{"host_port":53,"protocol":"udp"}]})");
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
    BOOST_TEST((s->mode == Mode::Bridge));
    BOOST_REQUIRE(s->ports.size() == 2u);
    BOOST_TEST(s->ports[0].hostPort == 8080);
    BOOST_TEST(s->ports[0].containerPort == 80);
    BOOST_TEST(s->ports[0].protocol == "tcp");
    BOOST_TEST(s->ports[1].containerPort == 53);  // defaults to the host port
    BOOST_TEST(s->ports[1].protocol == "udp");
}

BOOST_AUTO_TEST_CASE(user_conflist) {
    auto s = parseNetworkSpec(R"({"mode":"bridge","conflist":{"cniVersion":"0.4.0","name":"x","plugins":[{"type":"loopback"}]}})");
    BOOST_REQUIRE(s.ok());
    BOOST_REQUIRE(s->conflist.has_value());
    BOOST_TEST((*s->conflist)["name"] == "x");
}

BOOST_DATA_TEST_CASE(invalid_specs,
                     bdata::make({
                         R"({"mode":"bogus"})",
                         R"({"mode":"bridge","ports":[{"host_port":70000}]})",
                         R"({"mode":"bridge","ports":[{"host_port":0}]})",
                         R"({"mode":"bridge","ports":[{"container_port":80}]})",
                         R"({"mode":"bridge","ports":[{"host_port":80,"protocol":"sctp"}]})",
                         R"({"mode":"bridge","ports":[{"host_port":80},{"host_port":80}]})",
                         R"({"mode":"bridge","ports":[{"host_port":80,"extra":1}]})",
                         R"({"mode":"none","ports":[{"host_port":80}]})",
                         R"({"mode":"bridge","conflist":{"plugins":[]}})",
                         R"({"mode":"bridge","conflist":{"plugins":[{"notype":1}]}})",
                         R"({"unknown":1})",
                         R"([1])",
                         R"({)",
                     }),
                     text) {
    auto s = parseNetworkSpec(text);
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().name == "InvalidSpec");
}

BOOST_AUTO_TEST_CASE(same_port_two_protocols_is_fine) {
    BOOST_TEST(parseNetworkSpec(R"({"mode":"bridge","ports":[{"host_port":53},{"host_port":53,"protocol":"udp"}]})").ok());
}

BOOST_DATA_TEST_CASE(alloc_ids, bdata::make(std::vector<std::string>{"a", "0f3c-uuid-like.1_x", std::string(64, 'a')}), id) {
    BOOST_TEST(checkAllocId(id).ok());
}

BOOST_DATA_TEST_CASE(bad_alloc_ids, bdata::make(std::vector<std::string>{"", "-a", "a/b", "a b", "..", std::string(65, 'a')}), id) {
    auto r = checkAllocId(id);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "InvalidName");
}

// A conflist is kept whole, and copying it recursed once per level: this
// 100 KB spec was a segfault in CreateNetwork (issue 58).
BOOST_AUTO_TEST_CASE(a_conflist_nested_too_deep_is_refused) {
    const std::string deep = std::string(50000, '[') + std::string(50000, ']');
    auto s = parseNetworkSpec(R"({"mode":"bridge","conflist":{"plugins":[{"type":"bridge","x":)" + deep + "}]}}");
    BOOST_REQUIRE(!s.ok());
    BOOST_TEST(s.error().name == "InvalidSpec");
    BOOST_TEST(s.error().message.find("nests deeper than 64 at byte") != std::string::npos, s.error().message);
}
