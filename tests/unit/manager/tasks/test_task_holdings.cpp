// What a task holds (task_holdings.hpp) against the real pool, spool,
// record writer and start worker: each part goes back once and only where
// it is held, a forget's releaseRest gives back everything left and the
// dirs last, on the worker, and a part never taken is never given back.
#define BOOST_TEST_MODULE task_holdings
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "common/event_loop.hpp"
#include "common/worker.hpp"
#include "manager/launch/task_dirs.hpp"
#include "manager/node/cpu_pool.hpp"
#include "manager/records/log_spool.hpp"
#include "manager/records/record_writer.hpp"
#include "manager/records/state_store.hpp"
#include "manager/tasks/task_holdings.hpp"
#include "support/run_loop.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope;
using manager::TaskHoldings;
namespace fs = std::filesystem;

namespace {

struct Fixture {
    test::TempDir dir;
    std::string stateDir = dir.path + "/state";
    common::EventLoop loop;
    manager::StateStore store{stateDir};
    manager::LogSpool spool{dir.path + "/spool"};
    manager::RecordWriter records{store, loop};
    common::Worker worker{loop};
    // Cores 0-3, cgroup v2: a reservation shrinks the shared pool.
    manager::CpuPool cpus{{0, 1, 2, 3}, {}, true};
    manager::HoldingParts parts{cpus, nullptr, spool, records, worker};

    Fixture() {
        BOOST_REQUIRE(store.prepare());
        BOOST_REQUIRE(spool.prepareDir());
    }

    /// A task holding a reservation of one core, as its start leaves it.
    TaskHoldings reserved(const std::string& unit) {
        TaskHoldings h(unit);
        cpus.join(unit);
        spec::Resources one;
        one.cores = 1;
        BOOST_REQUIRE(cpus.assign(unit, one));
        h.tookCores();
        return h;
    }

    /// The dirs taskscope makes for an isolated task a/t.
    manager::OwnedTaskDirs madeDirs() {
        fs::create_directories(stateDir + "/tasks-root/a/tasks/t/tmp");
        manager::IsolationConfig node;
        node.defaultIsolated = true;
        return manager::OwnedTaskDirs::of(spec::TaskSpec{}, node, stateDir, "a", "t");
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(cores_go_back_once, Fixture) {
    auto h = reserved("a-t.scope");
    BOOST_TEST(cpus.shared().size() == 3u);
    BOOST_TEST(h.releaseCores(parts));  // the shared pool grew by its core
    BOOST_TEST(!h.holdsCores());
    BOOST_TEST(cpus.shared().size() == 4u);
    BOOST_TEST(!h.releaseCores(parts));
}

BOOST_FIXTURE_TEST_CASE(a_part_never_taken_is_never_given_back, Fixture) {
    // Another task's reservation on the same unit name is not this one's.
    auto other = reserved("a-t.scope");
    TaskHoldings h("a-t.scope");
    BOOST_TEST(!h.releaseCores(parts));
    BOOST_TEST(cpus.shared().size() == 3u);
    bool removed = false;
    h.releaseDirs(parts, true, [&](common::Result<void> r) {
        removed = true;
        BOOST_TEST(r.ok());
    });
    BOOST_TEST(removed);  // nothing to wait for
    (void)other.releaseCores(parts);
}

BOOST_FIXTURE_TEST_CASE(a_forget_gives_back_all_that_is_left_and_the_dirs_on_the_worker, Fixture) {
    auto h = reserved("a-t.scope");
    h.tookDirs(madeDirs());
    h.tookProcessSpec();
    { std::ofstream(store.processSpecFile("a-t.scope")) << "{}"; }
    bool dirsGone = false;
    const bool grew = h.releaseRest(parts, /*lastOfAlloc=*/true, [&](common::Result<void> r) {
        BOOST_TEST(r.ok());
        dirsGone = true;
    });
    BOOST_TEST(grew);
    BOOST_TEST(!h.holdsCores());
    BOOST_TEST(!h.holdsDirs());
    BOOST_TEST(!h.holdsProcessSpec());
    BOOST_REQUIRE(test::runUntil(loop, [&] { return dirsGone; }));
    BOOST_TEST(!fs::exists(stateDir + "/tasks-root/a"));
    BOOST_REQUIRE(test::runUntil(loop, [&] { return !fs::exists(store.processSpecFile("a-t.scope")); }));
}

BOOST_FIXTURE_TEST_CASE(dirs_never_made_are_not_removed, Fixture) {
    TaskHoldings h("a-t.scope");
    h.tookDirs(madeDirs());
    h.dirsNeverMade();  // a start whose worker turn was skipped
    bool told = false;
    h.releaseDirs(parts, true, [&](common::Result<void>) { told = true; });
    BOOST_TEST(told);
    BOOST_TEST(fs::exists(stateDir + "/tasks-root/a/tasks/t"));
}

BOOST_FIXTURE_TEST_CASE(a_spool_entry_handed_to_the_streamer_is_not_removed, Fixture) {
    manager::LogSettings settings{dir.path + "/logs", 1, 1, false, std::nullopt};
    BOOST_REQUIRE(spool.add("a-t.scope", "a", "t", settings));
    TaskHoldings h("a-t.scope");
    h.tookSpoolEntry();
    h.spoolEntryHandedOver();  // the task ran
    h.releaseSpoolEntry(parts);
    BOOST_TEST(fs::exists(spool.stdoutFifo("a-t.scope")));

    TaskHoldings never("a-t.scope");
    never.tookSpoolEntry();  // a start that failed
    never.releaseSpoolEntry(parts);
    BOOST_TEST(!fs::exists(spool.stdoutFifo("a-t.scope")));
}
