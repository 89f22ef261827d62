#define BOOST_TEST_MODULE signals
#include <signal.h>

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "common/signals.hpp"

using taskscope::common::parseSignal;
using taskscope::common::signalName;

namespace bdata = boost::unit_test::data;

static const char* const kGood[] = {"SIGTERM", "TERM", "term", "sigterm", "15"};
BOOST_DATA_TEST_CASE(spellings_of_sigterm, bdata::make(kGood), text) {
    auto r = parseSignal(text);
    BOOST_REQUIRE(r.ok());
    BOOST_TEST(*r == SIGTERM);
}

static const char* const kBad[] = {"", "SIG", "TERMINATE", "0", "-9", "9x", "999"};
BOOST_DATA_TEST_CASE(rejects_garbage, bdata::make(kBad), text) {
    auto r = parseSignal(text);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "InvalidSignal");
}

BOOST_AUTO_TEST_CASE(names_round_trip) {
    for (int sig : {SIGHUP, SIGINT, SIGKILL, SIGUSR1, SIGTERM, SIGWINCH}) {
        auto r = parseSignal(signalName(sig));
        BOOST_REQUIRE(r.ok());
        BOOST_TEST(*r == sig);
    }
    BOOST_TEST(signalName(SIGKILL) == "SIGKILL");
}
