#define BOOST_TEST_MODULE bus_error
#include <boost/test/unit_test.hpp>

#include "common/bus_error.hpp"
#include "common/sdbus_compat.hpp"

using namespace taskscope::common;

BOOST_AUTO_TEST_CASE(a_library_error_crosses_the_bus_and_back) {
    const auto bus = toBusError(makeError("NoSuchTask", "no task a1/web"));
    BOOST_TEST(bus.getName() == "org.taskscope.Error.NoSuchTask");
    BOOST_TEST(bus.getMessage() == "no task a1/web");
    const auto back = fromBusError(bus, "ask the manager");
    BOOST_TEST(back.name == "NoSuchTask");
    BOOST_TEST(back.message == "no task a1/web");
}

BOOST_AUTO_TEST_CASE(any_other_bus_error_is_internal_and_says_what_was_asked) {
    const auto e = fromBusError(taskscope::sdbus_compat::makeError("org.freedesktop.DBus.Error.NoReply", "timed out"),
                                "ask the manager");
    BOOST_TEST(e.name == "Internal");
    BOOST_TEST(e.message == "ask the manager: org.freedesktop.DBus.Error.NoReply: timed out");
}
