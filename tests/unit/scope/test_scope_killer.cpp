#define BOOST_TEST_MODULE scope_killer
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "common/event_loop.hpp"
#include "common/worker.hpp"
#include "scope/scope_killer.hpp"
#include "support/fake_systemd_client.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope;
using namespace std::chrono_literals;
using scope::CgroupHost;
using scope::CgroupVersion;
using test::FakeSystemdClient;

namespace {

struct Fixture {
    test::TempDir dir;
    common::EventLoop loop;
    common::Worker worker{loop};
    FakeSystemdClient systemd{&loop};

    common::Result<void> wait(const std::function<void(scope::ScopeKiller::Done)>& call) {
        std::optional<common::Result<void>> out;
        call([&](common::Result<void> r) { out = std::move(r); });
        const auto deadline = common::EventLoop::Clock::now() + 5s;
        while (!out && common::EventLoop::Clock::now() < deadline) {
            loop.addTimer(common::EventLoop::Clock::now() + 10ms, [this] { loop.quit(); });
            loop.run();
        }
        BOOST_REQUIRE(out.has_value());
        return std::move(*out);
    }
};

}  // namespace

// v2: cgroup.kill written (on the worker), nothing asked of systemd.
BOOST_FIXTURE_TEST_CASE(v2_writes_cgroup_kill, Fixture) {
    const auto cg = dir.path + "/nomad.slice/a1-web.scope";
    std::filesystem::create_directories(cg);
    { std::ofstream(cg + "/cgroup.kill") << ""; }
    scope::CgroupKill kill(CgroupHost{dir.path, CgroupVersion::V2}, "nomad.slice", systemd, worker);
    BOOST_TEST(wait([&](auto done) { kill.killAll("a1-web.scope", "/nomad.slice/a1-web.scope", done); }).ok());
    BOOST_TEST(test::slurp(cg + "/cgroup.kill") == "1");
    BOOST_TEST(systemd.calls.empty());
    // Its cgroup gone: every process with it.
    BOOST_TEST(wait([&](auto done) { kill.killLeftovers("a1-x.scope", "/nomad.slice/a1-x.scope", done); }).ok());
    BOOST_TEST(systemd.calls.empty());
}

// v2, the write refused (here: cgroup.kill is a directory): systemd after all.
BOOST_FIXTURE_TEST_CASE(v2_falls_back_to_systemd, Fixture) {
    std::filesystem::create_directories(dir.path + "/nomad.slice/a1-web.scope/cgroup.kill");
    systemd.addScope("a1-web.scope", "nomad.slice", 1);
    scope::CgroupKill kill(CgroupHost{dir.path, CgroupVersion::V2}, "nomad.slice", systemd, worker);
    BOOST_TEST(wait([&](auto done) { kill.killAll("a1-web.scope", "/nomad.slice/a1-web.scope", done); }).ok());
    BOOST_TEST(systemd.count("freezeUnit", "a1-web.scope") == 1u);
    BOOST_TEST(systemd.killed() == std::vector<std::string>{"a1-web.scope all 9"});
    BOOST_TEST(systemd.count("thawUnit", "a1-web.scope") == 1u);
    // A cgroup no path below the root names: systemd too, never a write.
    BOOST_TEST(wait([&](auto done) { kill.killAll("a1-web.scope", "/../../etc", done); }).ok());
    BOOST_TEST(systemd.count("freezeUnit", "a1-web.scope") == 2u);
    // The root ("/" read under an unexpected layout) or another unit's
    // scope: never written (issue 32), systemd asked.
    { std::ofstream(dir.path + "/cgroup.kill") << ""; }
    BOOST_TEST(wait([&](auto done) { kill.killAll("a1-web.scope", "/", done); }).ok());
    BOOST_TEST(wait([&](auto done) { kill.killAll("a1-web.scope", "/system.slice/a1-web.scope", done); }).ok());
    BOOST_TEST(systemd.count("freezeUnit", "a1-web.scope") == 4u);
    BOOST_TEST(test::slurp(dir.path + "/cgroup.kill") == "");
}

// v1: freeze, kill all, thaw; a failed freeze kills unfrozen and thaws nothing.
BOOST_FIXTURE_TEST_CASE(v1_freezes_kills_and_thaws_through_systemd, Fixture) {
    systemd.addScope("a1-web.scope", "nomad.slice", 1);
    scope::SystemdFreezeKill kill(systemd);
    BOOST_TEST(wait([&](auto done) { kill.killAll("a1-web.scope", "", done); }).ok());
    BOOST_TEST(systemd.count("thawUnit") == 1u);
    systemd.addScope("a1-web.scope", "nomad.slice", 1);
    systemd.failNext("freezeUnit", common::makeError("NotSupported", "no freezer"));
    BOOST_TEST(wait([&](auto done) { kill.killAll("a1-web.scope", "", done); }).ok());
    BOOST_TEST(systemd.count("killUnit") == 2u);
    BOOST_TEST(systemd.count("thawUnit") == 1u);
    systemd.failNext("killUnit", common::makeError("SystemdFailed", "refused"));
    auto refused = wait([&](auto done) { kill.killAll("a1-api.scope", "", done); });
    BOOST_REQUIRE(!refused);
    BOOST_TEST(refused.error().name == "SystemdFailed");
}

// What an ended task left: only while its scope is active.
BOOST_FIXTURE_TEST_CASE(v1_leftovers_only_while_the_scope_is_active, Fixture) {
    scope::SystemdFreezeKill kill(systemd);
    BOOST_TEST(wait([&](auto done) { kill.killLeftovers("a1-gone.scope", "", done); }).ok());
    BOOST_TEST(systemd.count("killUnit") == 0u);
    systemd.addScope("a1-web.scope", "nomad.slice", 1);
    BOOST_TEST(wait([&](auto done) { kill.killLeftovers("a1-web.scope", "", done); }).ok());
    BOOST_TEST(systemd.count("killUnit", "a1-web.scope") == 1u);
}

BOOST_AUTO_TEST_CASE(a_signal_reaches_only_a_process_in_the_unit) {
    // This test process is in no unit called so.
    auto r = scope::signalIfInUnit(::getpid(), "nomad.slice", "a1-nowhere.scope", 0);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "NotRunning");
}
