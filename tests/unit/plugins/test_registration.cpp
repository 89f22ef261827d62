// plugins/registration: the registration file read back after a restart.
#define BOOST_TEST_MODULE registration
#include <boost/test/unit_test.hpp>

#include "plugins/registration.hpp"

using namespace taskscope::plugins;

BOOST_AUTO_TEST_CASE(written_and_read_back) {
    Registration r{"csi", "hostpath", "a1", "plugin", "hostpath.csi.k8s.io", "1.0", {"CONTROLLER_SERVICE"}, true};
    auto back = parseRegistration(registrationText(r));
    BOOST_REQUIRE(back.ok());
    BOOST_TEST(back->name == "hostpath");
    BOOST_TEST(back->allocId == "a1");
    BOOST_TEST(back->capabilities == r.capabilities, boost::test_tools::per_element());
    BOOST_TEST(back->healthy);
    // An older manager's file without the later fields.
    auto old = parseRegistration(R"({"type":"csi","name":"x"})");
    BOOST_REQUIRE(old.ok());
    BOOST_TEST(old->provider.empty());
    BOOST_TEST(!old->healthy);
}

BOOST_AUTO_TEST_CASE(a_field_of_another_type_is_named) {
    for (const auto& [text, says] : std::initializer_list<std::pair<const char*, const char*>>{
             {R"({"type":1})", "field type is not a string"},
             {R"({"type":"csi","capabilities":"all"})", "field capabilities is not an array of strings"},
             {R"({"type":"csi","capabilities":[1]})", "field capabilities is not an array of strings"},
             {R"({"healthy":"yes"})", "field healthy is not true or false"},
             {"[]", "is not a JSON object"},
             {"{\"type\":", "not valid JSON at byte 8"}}) {
        auto r = parseRegistration(text);
        BOOST_REQUIRE(!r.ok());
        BOOST_TEST(r.error().name == "Internal");
        BOOST_TEST(r.error().message.find(says) != std::string::npos, r.error().message);
    }
}
