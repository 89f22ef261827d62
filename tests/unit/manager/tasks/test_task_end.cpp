// A task's end (task_end.hpp) against a real loop, exit watch, pacer and
// record writer, a fake systemd and a killer that only notes what it was
// asked: what the task held goes back before the end is announced, the
// record's last write has its end, a stop's timer and durable part go
// with it, a kill of leftovers that fails is heard, and a shim gone with
// or without its exit record.
#define BOOST_TEST_MODULE task_end
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/worker.hpp"
#include "manager/node/allocation_slices.hpp"
#include "manager/node/stop_pacer.hpp"
#include "manager/records/log_spool.hpp"
#include "manager/records/record_writer.hpp"
#include "manager/records/state_store.hpp"
#include "manager/tasks/exit_watch.hpp"
#include "manager/tasks/stop_procedure.hpp"
#include "manager/tasks/task_end.hpp"
#include "support/fake_systemd_client.hpp"
#include "support/noted_killer.hpp"
#include "support/record_on_disk.hpp"
#include "support/run_loop.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope;
using namespace std::chrono_literals;
using task::TaskRecord;
using task::TaskState;
using test::runUntil;

namespace {

/// The exit watch's events: only the reads matter here.
struct ExitsHeard final : manager::ExitEvents {
    std::map<std::string, common::Result<task::ExitStatus>> read;
    void shimsReaped(const std::set<pid_t>&) override {}
    void exitRecorded(const std::string&) override {}
    void spoolDrained(const std::string&) override {}
    void exitRead(const std::string& unit, common::Result<task::ExitStatus> status) override {
        read.insert_or_assign(unit, std::move(status));
    }
    void orphanEnded(const std::string&) override {}
};

/// What the end told, in order.
struct EndHeard final : manager::EndEvents {
    std::vector<std::string> said;
    TaskState stateAnnounced = TaskState::Starting;
    void coresFreed(TaskRecord& r) override { said.push_back("cores " + r.unit); }
    void endAnnounced(TaskRecord& r) override {
        said.push_back("announced " + r.unit);
        stateAnnounced = r.state;
        r.exitReported = true;
    }
    void leftoversSurvived(const std::string& unit, const common::Error& e) override {
        said.push_back("survived " + unit + ": " + e.message);
    }
    void shimDiedWithoutRecord(const TaskRecord& r) override { said.push_back("no record " + r.unit); }
};

struct StopsHeard final : manager::StopEvents {
    std::vector<int> signals;
    void stopChanged(const TaskRecord&) override {}
    void signalTask(const TaskRecord&, int signal) override { signals.push_back(signal); }
    void stopSent(const TaskRecord&, int, int64_t) override {}
    void stopQueued(const TaskRecord&) override {}
    void killFailed(const TaskRecord&, const common::Error&) override {}
};

struct Fixture {
    test::TempDir dir;
    common::EventLoop loop;
    test::FakeSystemdClient systemd{&loop};
    manager::StateStore store{dir.path + "/state"};
    manager::LogSpool spool{dir.path + "/spool"};
    manager::RecordWriter records{store, loop};
    common::Worker cgroupWorker{loop};
    ExitsHeard exitsHeard;
    manager::ExitWatch exits{loop, store, dir.path + "/spool", cgroupWorker, exitsHeard};
    /// The pacer's turn, as the registry passes it on (to a test's stop).
    std::function<void(const std::string&)> onAdmit = [](const std::string&) {};
    manager::StopPacer stops{0, 60s, &loop, [this](const std::string& unit) { onAdmit(unit); },
                             [this](std::function<void()> answered) { loop.post(std::move(answered)); }};
    manager::AllocationSlices slices{scope::SliceLayout{"nomad.slice", 64, 100}, systemd, &loop};
    test::NotedKiller killer;
    scope::CgroupHost host{dir.path + "/cgroup", scope::CgroupVersion::V2};
    std::map<pid_t, std::string> liveShims;
    EndHeard heard;
    manager::TaskEnd end{{stops, slices, exits, spool, killer, records, host, liveShims}, heard};
    TaskRecord record;

    Fixture() {
        BOOST_REQUIRE(store.prepare().ok());
        BOOST_REQUIRE(spool.prepareDir().ok());
        record.allocId = "a1";
        record.name = "web";
        record.unit = "a1-web.scope";
        record.cgroup = "/nomad.slice/a1-web.scope";
        record.specText = R"({"command":"/bin/sleep","args":["60"]})";
        record.state = TaskState::Running;
        record.pid = 4242;
        record.shimPid = 4241;
        record.spec.killSignal = SIGTERM;
    }

    /// The record as the disk has it, once the writes asked so far are done.
    TaskRecord onDisk() { return test::recordOnDisk(loop, records, store, record.unit); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(an_exit_gives_back_what_the_task_held_before_it_is_announced) {
    Fixture f;
    task::ExitStatus status;
    status.exitCode = 3;
    status.finishedAtUs = 1700000000000000u;
    f.end.exited(f.record, nullptr, status);
    BOOST_TEST((f.record.state == TaskState::Exited));
    BOOST_TEST(f.record.exit.exitCode == 3);
    BOOST_TEST(f.record.pid == 0);
    BOOST_TEST(f.heard.said == (std::vector<std::string>{"cores a1-web.scope", "announced a1-web.scope"}),
               boost::test_tools::per_element());
    BOOST_TEST((f.heard.stateAnnounced == TaskState::Exited));
    // What it left in its scope is killed, as Nomad's executor does.
    BOOST_TEST(f.killer.leftovers == std::vector<std::string>{"a1-web.scope"}, boost::test_tools::per_element());
    const auto disk = f.onDisk();
    BOOST_TEST((disk.state == TaskState::Exited));
    BOOST_TEST(disk.exit.exitCode == 3);
    BOOST_TEST(disk.exitReported);
}

BOOST_AUTO_TEST_CASE(a_lost_task_says_why_and_when) {
    Fixture f;
    f.record.exit.exitCode = 9;  // nothing of an earlier guess stays
    f.end.lost(f.record, nullptr, "its shim was killed");
    BOOST_TEST((f.record.state == TaskState::Lost));
    BOOST_TEST(f.record.lostReason == "its shim was killed");
    BOOST_TEST(f.record.exit.exitCode == -1);
    BOOST_TEST(f.record.exit.finishedAtUs > 0u);
    BOOST_TEST((f.heard.stateAnnounced == TaskState::Lost));
    BOOST_TEST(f.onDisk().lostReason == "its shim was killed");
}

BOOST_AUTO_TEST_CASE(the_end_takes_the_stops_timer_and_its_durable_part) {
    Fixture f;
    StopsHeard stopsHeard;
    manager::StopProcedure stop({f.loop, f.stops, f.killer, f.records}, f.record, stopsHeard);
    f.onAdmit = [&](const std::string&) { stop.admitted(); };
    BOOST_REQUIRE(stop.request("", 100).ok());
    BOOST_TEST(f.record.killDeadlineUs > 0u);
    f.end.exited(f.record, &stop, task::ExitStatus{});
    BOOST_TEST((stop.step() == manager::StopStep::Ended));
    BOOST_TEST(f.record.killDeadlineUs == 0u);
    BOOST_TEST(f.record.queuedStopSignal == 0);
    BOOST_TEST(f.onDisk().killDeadlineUs == 0u);
    // The grace's end passes with no kill of a task that has ended.
    const auto until = common::EventLoop::Clock::now() + 250ms;
    runUntil(f.loop, [&] { return common::EventLoop::Clock::now() >= until; });
    BOOST_TEST(f.killer.killed.empty());  // the stop's kill never came
}

BOOST_AUTO_TEST_CASE(a_kill_of_leftovers_that_fails_is_heard) {
    Fixture f;
    f.killer.answer = common::makeError("Failed", "cgroup.kill: EBUSY");
    f.end.exited(f.record, nullptr, task::ExitStatus{});
    BOOST_TEST(f.heard.said.size() == 3u);
    BOOST_TEST(f.heard.said[1] == "survived a1-web.scope: cgroup.kill: EBUSY");
}

BOOST_AUTO_TEST_CASE(a_shim_gone_with_its_exit_record_has_it_read) {
    Fixture f;
    std::ofstream(f.store.exitFile(f.record.unit)) << "exit_code=7\nsignal=0\noom_killed=0\nfinished_at_us=5\n";
    f.end.shimGone(f.record);
    BOOST_REQUIRE(runUntil(f.loop, [&] { return f.exitsHeard.read.count(f.record.unit) > 0; }));
    const auto& status = f.exitsHeard.read.at(f.record.unit);
    BOOST_REQUIRE(status.ok());
    BOOST_TEST(status->exitCode == 7);
    BOOST_TEST(f.heard.said.empty());  // not ended yet: the read's event ends it
}

BOOST_AUTO_TEST_CASE(a_shim_gone_without_its_exit_record_leaves_the_task_watched) {
    Fixture f;
    f.end.shimGone(f.record);
    BOOST_TEST(f.heard.said == std::vector<std::string>{"no record a1-web.scope"}, boost::test_tools::per_element());
    BOOST_TEST(f.exits.watchingOrphan(f.record.unit));
    BOOST_TEST((f.record.state == TaskState::Running));
    // Told once: a second SIGCHLD of the same shim is not a second death.
    f.end.shimGone(f.record);
    BOOST_TEST(f.heard.said.size() == 1u);
    f.exits.forget(f.record.unit);
}
