#define BOOST_TEST_MODULE scope_reconciler
#include <boost/test/unit_test.hpp>

#include <optional>
#include <set>

#include "manager/tasks/scope_reconciler.hpp"
#include "support/fake_systemd_client.hpp"

using namespace taskscope::manager;
using namespace std::chrono_literals;
using taskscope::test::FakeSystemdClient;

namespace {

constexpr uint64_t kNow = 1'700'000'000'000'000;  // µs since the epoch
constexpr uint64_t kMinuteUs = 60'000'000;

// A pass run to its end (this fake answers at once).
taskscope::common::Result<ReconcileOutcome> pass(ScopeReconciler& r) {
    std::optional<taskscope::common::Result<ReconcileOutcome>> out;
    r.runPass([&](taskscope::common::Result<ReconcileOutcome> o) { out = std::move(o); });
    BOOST_REQUIRE(out.has_value());
    return std::move(*out);
}

struct Fixture {
    FakeSystemdClient systemd;
    std::set<std::string> tracked;
    std::set<std::string> starting;  // as TaskRegistry::ownsUnit: a start owns its unit from the request on
    ReconcilerConfig config;  // 5 min period and grace
    bool owns(const std::string& unit) const { return tracked.count(unit) || starting.count(unit); }
    ScopeReconciler reconciler() {
        return ScopeReconciler(config, systemd, "nomad.slice", [this](const std::string& u) { return owns(u); },
                               [] { return kNow; });
    }
    std::vector<std::string> stoppedBy(ScopeReconciler& r) {
        auto out = pass(r);
        BOOST_REQUIRE(out.ok());
        std::vector<std::string> units;
        for (const auto& s : out->stopped) units.push_back(s.unit);
        return units;
    }
};

using Units = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_CASE(task_scope_names) {
    BOOST_TEST(isTaskScopeName("a1-web.scope"));
    BOOST_TEST(isTaskScopeName("3f2a0b7c-1d2e-4f5a-8b9c-0d1e2f3a4b5c-redis.scope"));
    BOOST_TEST(!isTaskScopeName("web.scope"));
    BOOST_TEST(!isTaskScopeName("-web.scope"));
    BOOST_TEST(!isTaskScopeName("a1-.scope"));
    BOOST_TEST(!isTaskScopeName("a1-web.service"));
    BOOST_TEST(!isTaskScopeName(".scope"));
}

BOOST_AUTO_TEST_CASE(first_pass_waits_for_the_longer_of_period_and_grace) {
    ReconcilerConfig c;
    c.period = 5min;
    c.creationGrace = 10min;
    BOOST_TEST(firstPassDelay(c).count() == std::chrono::milliseconds(10min).count());
    c.creationGrace = 1min;
    BOOST_TEST(firstPassDelay(c).count() == std::chrono::milliseconds(5min).count());
}

BOOST_AUTO_TEST_CASE(only_old_running_untracked_task_scopes_in_the_slice_are_killed) {
    Fixture f;
    const uint64_t old = kNow - 6 * kMinuteUs;
    f.systemd.addScope("a1-dangling.scope", "nomad.slice", old);
    f.systemd.addScope("a1-tracked.scope", "nomad.slice", old);
    f.tracked.insert("a1-tracked.scope");
    f.systemd.addScope("a1-young.scope", "nomad.slice", kNow - 4 * kMinuteUs);
    f.systemd.addScope("a1-never.scope", "nomad.slice", 0);
    f.systemd.addScope("a1-failed.scope", "nomad.slice", old, "failed");
    f.systemd.addScope("session-3.scope", "user-1000.slice", old);  // a login session: not ours
    f.systemd.addScope("plain.scope", "nomad.slice", old);           // not named like a task
    auto r = f.reconciler();
    BOOST_TEST(f.stoppedBy(r) == Units{"a1-dangling.scope"});
    BOOST_TEST(f.systemd.killed() == Units{"a1-dangling.scope all 9"});
    // Once the grace has passed, the young one goes too; nothing else.
    f.systemd.scopes["a1-young.scope"].activeEnterUs = old;
    BOOST_TEST(f.stoppedBy(r) == Units{"a1-young.scope"});
    BOOST_TEST(f.stoppedBy(r).empty());
}

BOOST_AUTO_TEST_CASE(dry_run_reports_and_kills_nothing) {
    Fixture f;
    f.config.dryRun = true;
    f.systemd.addScope("a1-dangling.scope", "nomad.slice", kNow - 6 * kMinuteUs);
    auto r = f.reconciler();
    auto out = pass(r);
    BOOST_REQUIRE(out.ok());
    BOOST_TEST(out->dryRun);
    BOOST_REQUIRE(out->stopped.size() == 1u);
    BOOST_TEST(out->stopped[0].unit == "a1-dangling.scope");
    BOOST_TEST(out->stopped[0].activeSinceUs == kNow - 6 * kMinuteUs);
    BOOST_TEST(f.systemd.killed().empty());
    BOOST_TEST(f.systemd.scopes.count("a1-dangling.scope") == 1u);
}

BOOST_AUTO_TEST_CASE(a_start_racing_a_pass_keeps_its_scope) {
    // A start owns its unit from the request on, then systemd creates the
    // scope; the pass lists it while the task is still starting. A zero
    // grace leaves ownership as the only thing between the pass and the kill.
    Fixture f;
    f.config.creationGrace = 0ms;
    f.systemd.addScope("a1-early.scope", "nomad.slice", kNow - kMinuteUs);
    f.systemd.addScope("a1-starting.scope", "nomad.slice", kNow - kMinuteUs);
    f.starting.insert("a1-starting.scope");
    // And a start that begins in the middle of the pass, after the listing
    // and the first ownership check: it owns its unit while the pass asks
    // systemd about it.
    f.systemd.addScope("a1-midpass.scope", "nomad.slice", kNow - kMinuteUs);
    f.systemd.onUnitInfo = [&](const std::string& unit) {
        if (unit == "a1-midpass.scope") f.starting.insert(unit);
    };
    auto r = f.reconciler();
    BOOST_TEST(f.stoppedBy(r) == Units{"a1-early.scope"});
    BOOST_TEST(f.systemd.scopes.count("a1-starting.scope") == 1u);
    BOOST_TEST(f.systemd.scopes.count("a1-midpass.scope") == 1u);

    // The starts end: one becomes a tracked task, the other fails and its
    // scope is left behind; the next pass takes only the leftover.
    f.systemd.onUnitInfo = nullptr;
    f.tracked.insert("a1-starting.scope");
    f.starting.clear();
    BOOST_TEST(f.stoppedBy(r) == Units{"a1-midpass.scope"});
    BOOST_TEST(f.systemd.scopes.count("a1-starting.scope") == 1u);
}

BOOST_AUTO_TEST_CASE(a_failed_listing_is_an_error_and_a_vanished_unit_is_skipped) {
    Fixture f;
    f.systemd.failNext("listUnits", taskscope::common::makeError("SystemdFailed", "listing refused"));
    auto r = f.reconciler();
    auto out = pass(r);
    BOOST_TEST(!out.ok());
    BOOST_TEST(out.error().name == "SystemdFailed");
    f.systemd.addScope("a1-gone.scope", "nomad.slice", kNow - 6 * kMinuteUs);
    f.systemd.onUnitInfo = [&](const std::string& unit) { f.systemd.scopes.erase(unit); };
    BOOST_TEST(f.stoppedBy(r).empty());
}

BOOST_AUTO_TEST_CASE(passes_run_on_the_loop_after_the_first_delay) {
    Fixture f;
    f.config.period = 1000ms;
    f.config.creationGrace = 0ms;
    f.systemd.addScope("a1-dangling.scope", "nomad.slice", kNow - kMinuteUs);
    taskscope::common::EventLoop loop;
    auto r = f.reconciler();
    std::vector<std::string> reported;
    const auto started = taskscope::common::EventLoop::Clock::now();
    r.start(
        loop,
        [&](const ReconcileOutcome& o) {
            for (const auto& s : o.stopped) reported.push_back(s.unit);
            loop.quit(0);
        },
        [](const taskscope::common::Error&) {});
    loop.addTimer(started + 5s, [&] { loop.quit(1); });
    BOOST_TEST(loop.run() == 0);
    BOOST_TEST(reported == Units{"a1-dangling.scope"});
    BOOST_TEST((taskscope::common::EventLoop::Clock::now() - started >= 1000ms));
}

BOOST_AUTO_TEST_CASE(nested_layout_scopes_and_leftover_allocation_slices) {
    Fixture f;
    const taskscope::scope::SliceLayout layout{"nomad.slice", 64, 100};
    const auto slice = [&](const std::string& alloc) {
        return *taskscope::scope::allocationSlice(layout, alloc, taskscope::scope::Pool::Shared);
    };
    const auto bucket = [&](const std::string& alloc) {
        return taskscope::scope::bucketSlice(layout, taskscope::scope::bucketOf(alloc, 64));
    };
    const uint64_t old = kNow - 6 * kMinuteUs;
    std::set<std::string> ownedSlices{slice("a1")};
    // A dangling scope in an allocation slice a task owns, and one owned.
    f.systemd.addScope("a1-dangling.scope", slice("a1"), old);
    f.systemd.addScope("a1-web.scope", slice("a1"), old);
    f.tracked.insert("a1-web.scope");
    // A leftover allocation slice (no task names it), a young one, the
    // owned one, and the tree's own slices, which stay.
    f.systemd.addScope(slice("a9"), bucket("a9"), old);
    f.systemd.addScope(slice("a8"), bucket("a8"), kNow - kMinuteUs);
    f.systemd.addScope(slice("a1"), bucket("a1"), old);
    f.systemd.addScope(bucket("a9"), "nomad-share.slice", old);
    f.systemd.addScope("nomad-share.slice", "nomad.slice", old);
    f.systemd.addScope("other-x.slice", "other.slice", old);
    auto r = f.reconciler();
    // Without the layout, a scope in an allocation slice is not judged.
    BOOST_TEST(f.stoppedBy(r).empty());
    r.watchSlices(layout, [&](const std::string& s) { return ownedSlices.count(s) > 0; });
    BOOST_TEST(f.stoppedBy(r) == (Units{"a1-dangling.scope", slice("a9")}));
    BOOST_TEST(f.systemd.killed() == Units{"a1-dangling.scope all 9"});
    BOOST_TEST(f.systemd.count("stopUnit", slice("a9")) == 1u);
    BOOST_TEST(f.systemd.count("stopUnit") == 1u);
}
