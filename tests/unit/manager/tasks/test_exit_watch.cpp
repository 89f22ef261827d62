#define BOOST_TEST_MODULE exit_watch
#include <boost/test/unit_test.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/worker.hpp"
#include "manager/tasks/exit_watch.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope;
using namespace std::chrono_literals;

namespace {

struct Heard final : manager::ExitEvents {
    std::vector<std::string> log;
    std::set<pid_t> reaped;
    void shimsReaped(const std::set<pid_t>& pids) override { reaped.insert(pids.begin(), pids.end()); }
    void exitRecorded(const std::string& unit) override { log.push_back("recorded " + unit); }
    void spoolDrained(const std::string& unit) override { log.push_back("drained " + unit); }
    void exitRead(const std::string& unit, common::Result<task::ExitStatus> s) override {
        log.push_back("read " + unit + " " + (s ? std::to_string(s->exitCode) : "error: " + s.error().message));
    }
    void orphanEnded(const std::string& unit) override { log.push_back("orphan " + unit); }
    bool saw(const std::string& prefix) const {
        for (const auto& l : log)
            if (l.rfind(prefix, 0) == 0) return true;
        return false;
    }
};

struct Fixture {
    test::TempDir dir;
    common::EventLoop loop;
    common::Worker worker{loop};
    manager::StateStore store{dir.path + "/state"};
    Heard heard;
    manager::ExitWatch watch{loop, store, dir.path + "/spool", worker, heard};

    Fixture() {
        BOOST_REQUIRE(store.prepare());
        std::filesystem::create_directories(dir.path + "/spool");
        BOOST_REQUIRE(watch.start());
    }
    bool runUntil(const std::function<bool()>& done, std::chrono::milliseconds limit = 5s) {
        const auto deadline = common::EventLoop::Clock::now() + limit;
        while (!done()) {
            if (common::EventLoop::Clock::now() >= deadline) return false;
            loop.addTimer(common::EventLoop::Clock::now() + 10ms, [this] { loop.quit(); });
            loop.run();
        }
        return true;
    }
    // As the shim puts its record in place: a rename into the directory.
    void record(const std::string& unit, const std::string& text) {
        const auto tmp = store.exitsDir() + "/." + unit + ".tmp";
        std::ofstream(tmp) << text;
        std::filesystem::rename(tmp, store.exitFile(unit));
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(an_exit_record_is_heard_and_read, Fixture) {
    record("a1-web.scope", "exit_code=3\nsignal=0\noom_killed=0\nfinished_at_us=1\n");
    BOOST_REQUIRE(runUntil([&] { return heard.saw("recorded a1-web.scope"); }));
    BOOST_TEST(watch.exitRecordExists("a1-web.scope"));
    watch.collect("a1-web.scope");
    BOOST_TEST(heard.saw("read a1-web.scope 3"));  // a readable one at once
}

// Read again after 50, 100, 200, 400 ms, then said to be unreadable.
BOOST_FIXTURE_TEST_CASE(an_unreadable_record_is_read_again_then_given_up, Fixture) {
    record("a1-web.scope", "garbage\n");
    watch.collect("a1-web.scope");
    BOOST_TEST(!heard.saw("read"));
    BOOST_REQUIRE(runUntil([&] { return heard.saw("read a1-web.scope error"); }));
    BOOST_TEST(heard.saw("read a1-web.scope error: exit record has no exit_code"));
    // ... and one that becomes readable meanwhile is read.
    record("a1-api.scope", "garbage\n");
    watch.collect("a1-api.scope");
    record("a1-api.scope", "exit_code=7\n");
    BOOST_REQUIRE(runUntil([&] { return heard.saw("read a1-api.scope"); }));
    BOOST_TEST(heard.saw("read a1-api.scope 7"));
}

BOOST_FIXTURE_TEST_CASE(a_forgotten_unit_is_read_no_more, Fixture) {
    record("a1-web.scope", "garbage\n");
    watch.collect("a1-web.scope");
    watch.forget("a1-web.scope");
    runUntil([] { return false; }, 1s);
    BOOST_TEST(!heard.saw("read"));
}

BOOST_FIXTURE_TEST_CASE(a_deleted_spool_description_is_drained, Fixture) {
    const auto desc = dir.path + "/spool/a1-web.scope.json";
    std::ofstream(desc) << "{}";
    std::filesystem::remove(desc);
    std::ofstream(dir.path + "/spool/a1-web.scope.stdout") << "";
    std::filesystem::remove(dir.path + "/spool/a1-web.scope.stdout");
    BOOST_REQUIRE(runUntil([&] { return heard.saw("drained"); }));
    BOOST_TEST(heard.log == (std::vector<std::string>{"drained a1-web.scope"}), boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(children_are_reaped_and_named, Fixture) {
    pid_t pid = 0;
    char arg0[] = "/bin/true";
    char* argv[] = {arg0, nullptr};
    char* envp[] = {nullptr};
    BOOST_REQUIRE(::posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, envp) == 0);
    BOOST_REQUIRE(runUntil([&] { return heard.reaped.count(pid) > 0; }));
    BOOST_TEST(::waitpid(pid, nullptr, WNOHANG) < 0);  // reaped already
}

// A task without a shim on cgroup v1 (no cgroup.events): looked at once a
// second until its scope is empty.
BOOST_FIXTURE_TEST_CASE(an_orphan_on_v1_ends_when_its_scope_is_empty, Fixture) {
    const auto procs = dir.path + "/cgroup.procs";
    std::ofstream(procs) << "4242\n";
    watch.watchOrphan("a1-web.scope", procs, "");
    BOOST_TEST(watch.watchingOrphan("a1-web.scope"));
    runUntil([] { return false; }, 1500ms);
    BOOST_TEST(!heard.saw("orphan"));
    std::ofstream(procs, std::ios::trunc) << "";
    BOOST_REQUIRE(runUntil([&] { return heard.saw("orphan a1-web.scope"); }, 5s));
    BOOST_TEST(!watch.watchingOrphan("a1-web.scope"));
}

// On v2 the look follows the kernel's word (a change of cgroup.events), not
// a clock: an emptied scope whose events file says nothing is not looked at
// again; once it changes, the end is heard. One already empty when the
// watch begins is heard at once.
BOOST_FIXTURE_TEST_CASE(an_orphan_on_v2_ends_when_its_cgroup_events_change, Fixture) {
    const auto procs = dir.path + "/cgroup.procs";
    const auto events = dir.path + "/cgroup.events";
    std::ofstream(procs) << "4242\n";
    std::ofstream(events) << "populated 1\nfrozen 0\n";
    watch.watchOrphan("a1-web.scope", procs, events);
    runUntil([] { return false; }, 500ms);  // its first look, done meanwhile, found it populated
    BOOST_TEST(!heard.saw("orphan"));
    std::ofstream(procs, std::ios::trunc) << "";
    runUntil([] { return false; }, 1500ms);
    BOOST_TEST(!heard.saw("orphan"));  // no look without an event
    std::ofstream(events, std::ios::trunc) << "populated 0\nfrozen 0\n";
    BOOST_REQUIRE(runUntil([&] { return heard.saw("orphan a1-web.scope"); }, 5s));
    BOOST_TEST(!watch.watchingOrphan("a1-web.scope"));

    watch.watchOrphan("a1-api.scope", procs, events);
    BOOST_REQUIRE(runUntil([&] { return heard.saw("orphan a1-api.scope"); }, 5s));
}

// Its exit record, should one appear after all, is heard as any other's.
BOOST_FIXTURE_TEST_CASE(an_orphans_exit_record_is_heard, Fixture) {
    const auto procs = dir.path + "/cgroup.procs";
    std::ofstream(procs) << "4242\n";
    watch.watchOrphan("a1-api.scope", procs, "");
    record("a1-api.scope", "exit_code=0\n");
    BOOST_REQUIRE(runUntil([&] { return heard.saw("recorded a1-api.scope"); }));
}
