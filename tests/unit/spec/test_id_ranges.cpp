#define BOOST_TEST_MODULE id_ranges
#include <boost/test/unit_test.hpp>

#include "spec/id_ranges.hpp"

using taskscope::spec::IdRanges;

// Nomad's exec syntax (drivers/shared/validators, client/lib/idset).
BOOST_AUTO_TEST_CASE(exec_syntax) {
    auto r = IdRanges::parse("0,10-20", "denied_host_uids");
    BOOST_REQUIRE(r.ok());
    BOOST_TEST(r->contains(0));
    BOOST_TEST(!r->contains(1));
    BOOST_TEST(r->contains(10));
    BOOST_TEST(r->contains(15));
    BOOST_TEST(r->contains(20));
    BOOST_TEST(!r->contains(21));
    BOOST_TEST(r->text() == "0,10-20");
    BOOST_TEST(IdRanges::parse("", "x")->empty());
    BOOST_TEST(IdRanges::parse("5-5", "x")->text() == "5");
    BOOST_TEST(IdRanges::parse("4294967295", "x")->contains(4294967295u));
}

BOOST_AUTO_TEST_CASE(bad_ranges_name_the_key_and_the_piece) {
    for (const char* bad : {"a", "1-", "-1", "20-10", "1,,2", " 5", "1-2-3", "4294967296", "+1", "0x10"}) {
        auto r = IdRanges::parse(bad, "denied_host_uids");
        BOOST_REQUIRE_MESSAGE(!r.ok(), bad);
        BOOST_TEST(r.error().name == "InvalidSpec");
        BOOST_TEST(r.error().message.find("denied_host_uids") == 0u, r.error().message);
    }
    BOOST_TEST(IdRanges::parse("20-10", "x").error().message.find("lower bound") != std::string::npos);
}
