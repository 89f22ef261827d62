// One task's stop (stop_procedure.hpp) against a real loop, pacer and
// record writer, and a killer that only notes what it was asked: the
// signal and its grace, the kill when the grace runs out, the durable part
// on disk before the step it guards, the stop that waits its turn, and
// the end that gives back the kill timer.
#define BOOST_TEST_MODULE stop_procedure
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/error_names.hpp"
#include "common/event_loop.hpp"
#include "manager/node/stop_pacer.hpp"
#include "manager/records/record_writer.hpp"
#include "manager/records/state_store.hpp"
#include "manager/tasks/stop_procedure.hpp"
#include "support/noted_killer.hpp"
#include "support/record_on_disk.hpp"
#include "support/run_loop.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope;
using namespace std::chrono_literals;
using manager::StopProcedure;
using manager::StopStep;
using task::TaskRecord;
using task::TaskState;
using test::runUntil;

namespace {

struct NotedEvents final : manager::StopEvents {
    int changed = 0;
    std::vector<int> signals;
    void stopChanged(const TaskRecord&) override { ++changed; }
    void signalTask(const TaskRecord&, int signal) override { signals.push_back(signal); }
    int sent = 0, queued = 0;
    std::vector<std::string> killsFailed;
    void stopSent(const TaskRecord&, int, int64_t) override { ++sent; }
    void stopQueued(const TaskRecord&) override { ++queued; }
    void killFailed(const TaskRecord& r, const common::Error& e) override {
        killsFailed.push_back(r.unit + ": " + e.message);
    }
};

/// One task, running, its stop in a pacer of `window` places whose round
/// trips are answered at once.
struct Fixture {
    test::TempDir dir;
    common::EventLoop loop;
    manager::StateStore store{dir.path + "/state"};
    manager::RecordWriter records{store, loop};
    test::NotedKiller killer;
    NotedEvents events;
    std::vector<std::string> admitted;
    manager::StopPacer pacer;
    TaskRecord record;
    StopProcedure stop;

    explicit Fixture(size_t window = 0)
        : pacer(
              window, 60s, &loop,
              [this](const std::string& unit) {
                  // As the registry does: the pacer's turn goes to the task's stop.
                  admitted.push_back(unit);
                  if (unit == record.unit) stop.admitted();
              },
              [this](std::function<void()> answered) { loop.post(std::move(answered)); }),
          record(running("a1", "web")),
          stop({loop, pacer, killer, records}, record, events) {
        BOOST_REQUIRE(store.prepare().ok());
    }

    static TaskRecord running(const std::string& alloc, const std::string& name) {
        TaskRecord r;
        r.allocId = alloc;
        r.name = name;
        r.unit = alloc + "-" + name + ".scope";
        r.specText = R"({"command":"/bin/sleep","args":["60"]})";
        r.state = TaskState::Running;
        r.spec.killSignal = SIGTERM;
        r.spec.killTimeoutMs = 5000;
        return r;
    }

    /// The record as the disk has it, once the writes asked so far are done.
    TaskRecord onDisk() { return test::recordOnDisk(loop, records, store, record.unit); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_stop_signals_with_the_specs_signal_and_kills_when_its_grace_runs_out) {
    Fixture f;
    const auto before = manager::bootUs();
    BOOST_REQUIRE(f.stop.request("", 100).ok());
    BOOST_TEST(f.events.changed == 1);
    BOOST_TEST((f.record.state == TaskState::Stopping));
    BOOST_TEST(f.events.signals == std::vector<int>{SIGTERM}, boost::test_tools::per_element());
    BOOST_TEST((f.stop.step() == StopStep::Signalled));
    // The deadline went to disk with the signal: a restart kills on time.
    BOOST_TEST(f.onDisk().killDeadlineUs >= before + 100000u);
    BOOST_TEST(f.killer.killed.empty());
    BOOST_REQUIRE(runUntil(f.loop, [&] { return !f.killer.killed.empty(); }));
    BOOST_TEST(f.killer.killed.front() == "a1-web.scope");
    BOOST_TEST((f.stop.step() == StopStep::Killing));
}

BOOST_AUTO_TEST_CASE(no_grace_kills_at_once_without_a_signal_or_a_deadline) {
    Fixture f;
    BOOST_REQUIRE(f.stop.request("SIGINT", 0).ok());
    BOOST_TEST(f.events.signals.empty());
    BOOST_TEST(f.killer.killed.size() == 1u);
    BOOST_TEST((f.stop.step() == StopStep::Killing));
    BOOST_TEST(f.onDisk().killDeadlineUs == 0u);
}

BOOST_AUTO_TEST_CASE(bad_input_changes_nothing) {
    Fixture f;
    auto bad = f.stop.request("SIGNOPE", 100);
    BOOST_REQUIRE(!bad.ok());
    BOOST_TEST((f.record.state == TaskState::Running));
    BOOST_TEST(f.events.changed == 0);
    BOOST_TEST((f.stop.step() == StopStep::Idle));

    f.record.state = TaskState::Exited;
    auto late = f.stop.request("", 100);
    BOOST_REQUIRE(!late.ok());
    BOOST_TEST(late.error().name == common::errors::kNotRunning);
    BOOST_TEST(f.events.signals.empty());
}

BOOST_AUTO_TEST_CASE(a_second_request_signals_again_its_grace_from_now) {
    Fixture f;
    BOOST_REQUIRE(f.stop.request("", 60000).ok());
    const auto first = f.record.killDeadlineUs;
    BOOST_REQUIRE(f.stop.request("SIGKILL", 50).ok());
    BOOST_TEST(f.events.signals == (std::vector<int>{SIGTERM, SIGKILL}), boost::test_tools::per_element());
    BOOST_TEST(f.events.changed == 1);  // stopping once
    BOOST_TEST(f.record.killDeadlineUs < first);
    BOOST_REQUIRE(runUntil(f.loop, [&] { return !f.killer.killed.empty(); }));
}

BOOST_AUTO_TEST_CASE(the_end_gives_back_the_kill_timer) {
    Fixture f;
    BOOST_REQUIRE(f.stop.request("", 50).ok());
    f.record.state = TaskState::Exited;
    f.stop.ended();
    BOOST_TEST((f.stop.step() == StopStep::Ended));
    const auto until = common::EventLoop::Clock::now() + 200ms;
    runUntil(f.loop, [&] { return common::EventLoop::Clock::now() >= until; });
    BOOST_TEST(f.killer.killed.empty());
}

BOOST_AUTO_TEST_CASE(a_stop_past_the_window_waits_its_turn_on_disk) {
    Fixture f(1);
    // Another task holds the window's one place.
    f.pacer.request("a1-other.scope", false);
    BOOST_REQUIRE(f.stop.request("SIGINT", 300).ok());
    BOOST_TEST((f.stop.step() == StopStep::Requested));
    BOOST_TEST(f.events.signals.empty());
    // Its signal and grace are on disk: a restart asks its turn again.
    const auto queued = f.onDisk();
    BOOST_TEST(queued.queuedStopSignal == SIGINT);
    BOOST_TEST(queued.queuedStopGraceMs == 300);

    // The place frees once the other has ended (and systemd's round trip,
    // answered at once here, is done): the pacer admits the stop.
    f.pacer.ended("a1-other.scope");
    BOOST_REQUIRE(runUntil(f.loop, [&] { return f.admitted.back() == "a1-web.scope"; }));
    BOOST_TEST(f.events.signals == std::vector<int>{SIGINT}, boost::test_tools::per_element());
    BOOST_TEST((f.stop.step() == StopStep::Signalled));
    BOOST_TEST(f.record.queuedStopSignal == 0);
}

BOOST_AUTO_TEST_CASE(a_restart_past_the_deadline_kills_at_once) {
    Fixture f;
    f.record.state = TaskState::Stopping;
    f.record.killDeadlineUs = manager::bootUs() - 1000;
    f.stop.resumeDeadline();
    BOOST_TEST((f.stop.step() == StopStep::Signalled));
    BOOST_REQUIRE(runUntil(f.loop, [&] { return !f.killer.killed.empty(); }));
    BOOST_TEST(f.events.signals.empty());
}

BOOST_AUTO_TEST_CASE(a_kill_that_is_not_delivered_is_heard_not_only_logged) {
    Fixture f;
    f.killer.answer = common::makeError("Failed", "cgroup.kill: EBUSY; systemd: NoReply");
    BOOST_REQUIRE(f.stop.request("", 0).ok());
    BOOST_TEST(f.events.sent == 1);
    BOOST_TEST(f.events.killsFailed == std::vector<std::string>{"a1-web.scope: cgroup.kill: EBUSY; systemd: NoReply"},
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_stop_tells_when_it_waits_and_when_it_goes) {
    Fixture f(1);
    f.pacer.request("a1-other.scope", false);
    BOOST_REQUIRE(f.stop.request("", 300).ok());
    BOOST_TEST(f.events.queued == 1);
    BOOST_TEST(f.events.sent == 0);
    f.pacer.ended("a1-other.scope");
    BOOST_REQUIRE(runUntil(f.loop, [&] { return f.events.sent == 1; }));
}
