#define BOOST_TEST_MODULE network_record
#include <boost/test/unit_test.hpp>

#include "network/network_manager.hpp"

using namespace taskscope::network;

BOOST_AUTO_TEST_CASE(round_trip) {
    NetworkRecord r;
    r.allocId = "a1";
    r.specJson = R"({"mode":"bridge","ports":[{"host_port":8080}]})";
    r.phase = "ready";
    r.netnsPath = "/run/netns/a1";
    r.conflist = defaultConflist({});
    r.result = {{"ips", {{{"address", "172.26.64.2/20"}}}}};
    r.addresses = {"172.26.64.2/20"};
    auto back = recordFromJson(recordToJson(r).dump());
    BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? std::string() : back.error().message));
    BOOST_TEST(back->allocId == "a1");
    BOOST_TEST(back->phase == "ready");
    BOOST_TEST((back->spec.mode == Mode::Bridge));
    BOOST_TEST(back->spec.ports.at(0).hostPort == 8080);
    BOOST_TEST(back->conflist == r.conflist);
    BOOST_TEST(back->addresses.at(0) == "172.26.64.2/20");
}

BOOST_AUTO_TEST_CASE(intent_written_by_hand) {
    // The form the system test writes for an interrupted creation.
    auto r = recordFromJson(R"({"alloc_id":"n-x","spec":"{}","phase":"intent","netns":"/run/netns/n-x",)"
                            R"("conflist":null,"result":null,"addresses":[]})");
    BOOST_REQUIRE(r.ok());
    BOOST_TEST(r->phase == "intent");
    BOOST_TEST((r->spec.mode == Mode::None));
    BOOST_TEST(!recordFromJson("{}").ok());
    BOOST_TEST(!recordFromJson("nope").ok());
}
