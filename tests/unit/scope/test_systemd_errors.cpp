#define BOOST_TEST_MODULE systemd_errors
#include <boost/test/unit_test.hpp>

#include "common/sdbus_compat.hpp"
#include "scope/sdbus_systemd_client.hpp"

using taskscope::scope::systemdError;

// systemd answers a property it does not know with PropertyReadOnly; the
// caller must learn which property, under a name of its own.
BOOST_AUTO_TEST_CASE(unknown_property_is_named) {
    auto e =
        systemdError(taskscope::sdbus_compat::makeError("org.freedesktop.DBus.Error.PropertyReadOnly",
                                                        "Cannot set property MemoryZswapMax, or unknown property."),
                     "start scope a1-web.scope");
    BOOST_TEST(e.name == "UnsupportedProperty");
    BOOST_TEST(e.message.find("MemoryZswapMax") != std::string::npos);
    BOOST_TEST(e.message.find("start scope a1-web.scope") == 0u);
}

BOOST_AUTO_TEST_CASE(other_errors_keep_their_origin) {
    BOOST_TEST(
        systemdError(taskscope::sdbus_compat::makeError("org.freedesktop.systemd1.NoSuchUnit", "x"), "kill").name ==
        "NoSuchUnit");
    BOOST_TEST(
        systemdError(taskscope::sdbus_compat::makeError("org.freedesktop.systemd1.UnitExists", "x"), "start").name ==
        "UnitExists");
    BOOST_TEST(
        systemdError(taskscope::sdbus_compat::makeError("org.freedesktop.DBus.Error.NotSupported", "x"), "freeze")
            .name == "NotSupported");
    auto e = systemdError(taskscope::sdbus_compat::makeError("org.freedesktop.DBus.Error.AccessDenied", "no"), "start");
    BOOST_TEST(e.name == "SystemdFailed");
    BOOST_TEST(e.message.find("org.freedesktop.DBus.Error.AccessDenied") != std::string::npos);
}
