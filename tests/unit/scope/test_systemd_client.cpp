#define BOOST_TEST_MODULE systemd_client
#include <boost/test/unit_test.hpp>

#include <optional>

#include "scope/systemd_client.hpp"
#include "support/fake_systemd_client.hpp"

using taskscope::common::makeError;
using taskscope::common::Result;
using taskscope::scope::startResettingFailed;
using taskscope::test::FakeSystemdClient;

namespace {

// A start that fails with UnitExists `refusals` times, then succeeds.
struct Start {
    int refusals;
    int calls = 0;
    Result<void> operator()() {
        if (++calls <= refusals) return makeError("UnitExists", "unit a1-web.scope already exists");
        return {};
    }
};

// A systemd that has a1-web.scope loaded in `state`.
struct Loaded {
    FakeSystemdClient systemd;
    explicit Loaded(const char* state) { systemd.scopes["a1-web.scope"].active = state; }
};

// The asynchronous form, run to its completion (the fake completes at once).
Result<void> startAsync(FakeSystemdClient& systemd, Start& start) {
    std::optional<Result<void>> out;
    taskscope::scope::startResettingFailedAsync(
        systemd, "a1-web.scope", [&](auto done) { done(start()); }, [&](Result<void> r) { out = std::move(r); });
    BOOST_REQUIRE(out.has_value());
    return std::move(*out);
}

Result<void> startSync(FakeSystemdClient& systemd, Start& start) {
    return startResettingFailed(systemd, "a1-web.scope", std::ref(start));
}

// The synchronous and the asynchronous form follow one policy.
const std::pair<const char*, Result<void> (*)(FakeSystemdClient&, Start&)> kForms[] = {{"sync", startSync},
                                                                                       {"async", startAsync}};

}  // namespace

BOOST_AUTO_TEST_CASE(a_unit_left_failed_is_reset_and_the_start_retried_once) {
    for (const auto& [form, run] : kForms) {
        BOOST_TEST_CONTEXT(form) {
            Loaded loaded("failed");
            Start start{1};
            BOOST_TEST(static_cast<bool>(run(loaded.systemd, start)));
            BOOST_TEST(start.calls == 2);
            BOOST_TEST(loaded.systemd.count("resetFailedUnit", "a1-web.scope") == 1u);
        }
    }
}

BOOST_AUTO_TEST_CASE(only_once) {
    Loaded loaded("failed");
    auto& systemd = loaded.systemd;
    Start start{5};
    auto r = startResettingFailed(systemd, "a1-web.scope", std::ref(start));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "UnitExists");
    BOOST_TEST(start.calls == 2);
}

BOOST_AUTO_TEST_CASE(an_active_unit_of_that_name_is_a_conflict_and_never_reset) {
    for (const auto& [form, run] : kForms) {
        BOOST_TEST_CONTEXT(form) {
            Loaded loaded("active");
            Start start{1};
            auto r = run(loaded.systemd, start);
            BOOST_REQUIRE(!r);
            BOOST_TEST(r.error().name == "UnitExists");
            BOOST_TEST(start.calls == 1);
            BOOST_TEST(loaded.systemd.count("resetFailedUnit") == 0u);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_failed_reset_is_the_error) {
    Loaded loaded("failed");
    auto& systemd = loaded.systemd;
    systemd.failNext("resetFailedUnit", makeError("SystemdFailed", "reset-failed a1-web.scope: denied"));
    Start start{1};
    auto r = startResettingFailed(systemd, "a1-web.scope", std::ref(start));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().message.find("reset-failed") != std::string::npos);
    BOOST_TEST(start.calls == 1);
}
