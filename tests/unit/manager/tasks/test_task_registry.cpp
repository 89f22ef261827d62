#define BOOST_TEST_MODULE task_registry
#include <boost/test/unit_test.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/cpu_list.hpp"
#include "common/event_loop.hpp"
#include "common/files.hpp"
#include "common/unique_fd.hpp"
#include "manager/node/fd_budget.hpp"
#include "manager/tasks/task_registry.hpp"
#include "support/fake_systemd_client.hpp"
#include "support/temp_dir.hpp"

// The task lifecycle against a fake systemd and the real shim, running
// harmless commands (/bin/sleep, /bin/sh) as the current user. No systemd,
// no cgroups: what systemd itself does is the system tier's to prove.

using namespace taskscope;
using manager::TaskRegistry;
using manager::TaskRecord;
using manager::TaskState;
using test::FakeSystemdClient;

namespace taskscope::wire {
std::ostream& operator<<(std::ostream& out, TaskState s) {
    return out << toString(s);
}
}  // namespace taskscope::wire

namespace {

using namespace std::chrono_literals;

struct Event {
    std::string kind;
    std::string allocId;
    std::string task;
    TaskState state;
};

struct Recorder final : manager::TaskEvents {
    std::vector<Event> events;
    void add(const char* kind, const TaskRecord& r) { events.push_back({kind, r.allocId, r.name, r.state}); }
    void taskAdded(const TaskRecord& r) override { add("added", r); }
    void taskChanged(const TaskRecord& r) override { add("changed", r); }
    void taskExited(const TaskRecord& r) override { add("exited", r); }
    void taskRemoved(const TaskRecord& r) override { add("removed", r); }
    void taskStartFailed(const TaskRecord& r, const std::string& name) override {
        events.push_back({"start failed " + name, r.allocId, r.name, r.state});
    }
    size_t count(const std::string& kind) const {
        size_t n = 0;
        for (const auto& e : events) n += e.kind == kind;
        return n;
    }
};

std::string me() {
    const auto* pw = ::getpwuid(::getuid());
    return pw ? pw->pw_name : "root";
}

std::string taskSpec(const std::string& command, const std::vector<std::string>& args, nlohmann::json extra = {}) {
    nlohmann::json j = {{"command", command}, {"args", args}, {"user", me()}};
    if (extra.is_object())
        for (const auto& [k, v] : extra.items()) j[k] = v;
    return j.dump();
}

// Gone, or a zombie nobody reaps (a test container's PID 1 may not).
bool processGone(pid_t pid) {
    if (::kill(pid, 0) < 0) return errno == ESRCH;
    auto stat = test::slurp("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

size_t filesIn(const std::string& dir) {
    size_t n = 0;
    if (!std::filesystem::exists(dir)) return 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
    return n;
}

// Records in a state directory: a record being rewritten (a running task's
// cgroup, written after its start is answered) is there as NAME.tmp for a
// moment beside NAME, and is not a second record.
size_t recordsIn(const std::string& dir) {
    size_t n = 0;
    if (!std::filesystem::exists(dir)) return 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() != ".tmp") ++n;
    return n;
}

size_t openFds() {
    return filesIn("/proc/self/fd") - 1;  // not the listing's own descriptor
}

struct Fixture {
    test::TempDir dir;
    common::EventLoop loop;
    FakeSystemdClient systemd{&loop};
    manager::Config config;
    Recorder events;
    std::unique_ptr<TaskRegistry> tasks;
    std::set<unsigned> usable;
    scope::CgroupHost host;

    Fixture() {
        const char* shim = std::getenv("TASKSCOPE_SHIM_PATH");
        BOOST_REQUIRE_MESSAGE(shim, "TASKSCOPE_SHIM_PATH must name the built shim");
        config.shimPath = shim;
        config.stateDir = dir.path + "/state";
        config.logSpoolDir = dir.path + "/spool";
        host.root = dir.path + "/cgroup";  // no cgroup files: kills go through the fake
        host.version = scope::CgroupVersion::V1;
    }
    ~Fixture() {
        tasks.reset();
        // Whatever a test left running dies with it.
        for (const auto& [unit, s] : systemd.scopes)
            for (auto pid : s.pids) ::kill(static_cast<pid_t>(pid), SIGKILL);
        for (auto pid : systemd.lastStartPids) ::kill(static_cast<pid_t>(pid), SIGKILL);
        // No streamer drains the spool here: release the shims that hold it.
        std::error_code ec;
        for (const auto& f : std::filesystem::directory_iterator(config.logSpoolDir, ec))
            if (f.path().extension() == ".release") common::pokeFifo(f.path());
        // The shims (our only children) write their exit records into the
        // temp dir; it goes only after they are done.
        while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
        }
    }

    void open() {
        tasks = std::make_unique<TaskRegistry>(config, systemd, systemd, loop, "/org/taskscope/Manager1/task", usable, host);
        auto r = tasks->recover();
        BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
        tasks->attach(events);
    }

    // The asynchronous API, called and waited for (the loop runs meanwhile).
    common::Result<const TaskRecord*> tryStart(const std::string& alloc, const std::string& task,
                                               const std::string& specJson) {
        std::optional<common::Result<const TaskRecord*>> out;
        tasks->start(alloc, task, specJson, [&](common::Result<const TaskRecord*> r) { out = std::move(r); });
        BOOST_REQUIRE_MESSAGE(runUntil([&] { return out.has_value(); }), "start " << alloc << "/" << task);
        return std::move(*out);
    }
    const TaskRecord& start(const std::string& alloc, const std::string& task, const std::string& specJson) {
        auto r = tryStart(alloc, task, specJson);
        BOOST_REQUIRE_MESSAGE(r, "start " << alloc << "/" << task << ": " << (r ? "" : r.error().message));
        return **r;
    }
    common::Result<void> wait(const std::function<void(TaskRegistry::Done)>& call) {
        std::optional<common::Result<void>> out;
        call([&](common::Result<void> r) { out = std::move(r); });
        BOOST_REQUIRE(runUntil([&] { return out.has_value(); }));
        return std::move(*out);
    }
    common::Result<void> stopTask(const std::string& alloc, const std::string& task, const std::string& sig,
                                  int64_t grace) {
        return wait([&](TaskRegistry::Done done) { tasks->stop(alloc, task, sig, grace, std::move(done)); });
    }
    common::Result<void> updateTask(const std::string& alloc, const std::string& task, const std::string& json) {
        return wait([&](TaskRegistry::Done done) { tasks->update(alloc, task, json, std::move(done)); });
    }
    common::Result<void> forgetTask(const std::string& alloc, const std::string& task) {
        return wait([&](TaskRegistry::Done done) { tasks->forget(alloc, task, std::move(done)); });
    }

    /// A start asks systemd once its shim has reported the task's pid,
    /// which comes through the loop.
    void untilAsked(const std::string& method, size_t n) {
        BOOST_REQUIRE_MESSAGE(runUntil([&] { return systemd.count(method) >= n; }), method << " asked " << n << " times");
    }

    TaskState state(const std::string& alloc, const std::string& task) {
        auto r = tasks->get(alloc, task);
        BOOST_REQUIRE(r);
        return (*r)->state;
    }

    /// Runs the manager's loop until `done` or the limit; never longer.
    bool runUntil(const std::function<bool()>& done, std::chrono::milliseconds limit = 10s) {
        const auto deadline = common::EventLoop::Clock::now() + limit;
        while (!done()) {
            if (common::EventLoop::Clock::now() >= deadline) return false;
            // A short turn of the loop: events (inotify, SIGCHLD) arrive as fds.
            loop.addTimer(common::EventLoop::Clock::now() + 10ms, [this] { loop.quit(); });
            loop.run();
        }
        return true;
    }

    /// The manager's descriptors once no record write is in flight (the
    /// writer's thread holds a file for a moment after a start is
    /// answered): three looks, 20 ms apart, that agree.
    size_t settledFds() {
        size_t last = openFds(), same = 0;
        while (same < 3) {
            runUntil([] { return false; }, 20ms);
            const auto now = openFds();
            same = now == last ? same + 1 : 0;
            last = now;
        }
        return last;
    }

    /// A command that resolves when the spec is checked and is gone by the
    /// time the shim execs it (removed while systemd starts the scope):
    /// the start fails with ExecFailed after the scope exists.
    std::string vanishingBinary() {
        const auto bin = dir.path + "/vanishing";
        std::filesystem::copy_file("/bin/true", bin);
        ::chmod(bin.c_str(), 0755);
        systemd.duringNext("startScope", [bin] { std::filesystem::remove(bin); });
        return bin;
    }

    bool finished(const std::string& alloc, const std::string& task) {
        auto r = tasks->get(alloc, task);
        return r && (*r)->finished();
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(start_puts_the_stopped_task_in_its_scope_then_runs_it, Fixture) {
    open();
    const auto& r = start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_TEST(r.state == TaskState::Running);
    BOOST_TEST(r.unit == "a1-web.scope");
    BOOST_TEST(r.pid > 0);
    BOOST_TEST(!processGone(r.pid));
    BOOST_TEST(systemd.count("startScope", "a1-web.scope") == 1u);
    BOOST_REQUIRE(systemd.lastStartPids.size() == 1u);
    BOOST_TEST(systemd.lastStartPids[0] == static_cast<uint32_t>(r.pid));
    BOOST_TEST(!r.cgroup.empty());  // as /proc/<pid>/cgroup says: no round trip to systemd
    const auto& props = systemd.scopes.at("a1-web.scope").properties;
    bool slice = false;
    for (const auto& p : props) slice |= p.get<0>() == "Slice";
    BOOST_TEST(slice);
    BOOST_TEST(std::filesystem::exists(config.stateDir + "/tasks/a1-web.scope.json"));
    BOOST_TEST(events.count("added") == 1u);
}

namespace {
// The scope's TasksMax, or 0 when the start left it to systemd.
uint64_t tasksMaxOf(const FakeSystemdClient& systemd, const std::string& unit) {
    for (const auto& p : systemd.scopes.at(unit).properties)
        if (p.get<0>() == "TasksMax") return p.get<1>().get<uint64_t>();
    return 0;
}
}  // namespace

BOOST_FIXTURE_TEST_CASE(a_spec_without_pids_max_gets_the_nodes_default, Fixture) {
    config.defaultPidsMax = 321;
    open();
    start("a1", "plain", taskSpec("/bin/sleep", {"1000"}));
    BOOST_TEST(tasksMaxOf(systemd, "a1-plain.scope") == 321u);
    start("a1", "own", R"({"command":"/bin/sleep","args":["1000"],"resources":{"pids_max":7}})");
    BOOST_TEST(tasksMaxOf(systemd, "a1-own.scope") == 7u);
}

BOOST_FIXTURE_TEST_CASE(a_node_default_of_zero_leaves_systemds_tasks_max, Fixture) {
    config.defaultPidsMax = 0;
    open();
    start("a1", "plain", taskSpec("/bin/sleep", {"1000"}));
    BOOST_TEST(tasksMaxOf(systemd, "a1-plain.scope") == 0u);
}

BOOST_FIXTURE_TEST_CASE(a_second_start_of_one_task_is_refused, Fixture) {
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    auto again = tryStart("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(!again);
    BOOST_TEST(again.error().name == "TaskExists");
    BOOST_TEST(systemd.count("startScope") == 1u);
}

BOOST_FIXTURE_TEST_CASE(an_exit_is_collected_from_the_shims_record, Fixture) {
    open();
    start("a1", "job", taskSpec("/bin/sh", {"-c", "exit 3"}));
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "job"); }));
    const auto& r = **tasks->get("a1", "job");
    BOOST_TEST(r.state == TaskState::Exited);
    BOOST_TEST(r.exit.exitCode == 3);
    BOOST_TEST(r.exit.signal == 0);
    BOOST_TEST(r.pid == 0);
    BOOST_TEST(events.count("exited") == 1u);
    BOOST_TEST(r.exitReported);
}

BOOST_FIXTURE_TEST_CASE(stop_without_grace_kills_every_process_through_systemd_on_v1, Fixture) {
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(stopTask("a1", "web", "", 0));
    BOOST_TEST(state("a1", "web") == TaskState::Stopping);
    // cgroup v1: freeze, SIGKILL all, thaw (each step once systemd answered the one before).
    BOOST_TEST(runUntil([&] { return systemd.count("thawUnit", "a1-web.scope") >= 1u; }));
    BOOST_TEST(systemd.count("freezeUnit", "a1-web.scope") >= 1u);
    BOOST_TEST(systemd.count("killUnit", "a1-web.scope") >= 1u);
    BOOST_TEST(systemd.count("thawUnit", "a1-web.scope") >= 1u);
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "web"); }));
    const auto& r = **tasks->get("a1", "web");
    BOOST_TEST(r.exit.signal == SIGKILL);
}

BOOST_FIXTURE_TEST_CASE(stop_kills_when_the_grace_ends, Fixture) {
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    // The signal only goes to a PID inside the task's scope; the fake has
    // no cgroups, so here only the kill at the end of the grace ends it.
    BOOST_REQUIRE(stopTask("a1", "web", "SIGTERM", 200));
    BOOST_TEST(systemd.count("killUnit") == 0u);
    BOOST_TEST((**tasks->get("a1", "web")).killDeadlineUs > 0u);
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "web"); }));
    BOOST_TEST((**tasks->get("a1", "web")).exit.signal == SIGKILL);
    BOOST_TEST(systemd.count("killUnit", "a1-web.scope") >= 1u);
}

// Issue 31: a drain's stops go at the pace systemd collects what they end.
BOOST_FIXTURE_TEST_CASE(a_stop_past_the_window_waits_until_systemd_has_run_a_job_since, Fixture) {
    config.stopWindow = 1;
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    start("a2", "web", taskSpec("/bin/sleep", {"1000"}));
    systemd.hold("roundTrip");
    BOOST_REQUIRE(stopTask("a1", "web", "", 0));
    BOOST_REQUIRE(stopTask("a2", "web", "", 0));
    // Answered at once, stopping, its kill not sent: a1 holds the window.
    BOOST_TEST(state("a2", "web") == TaskState::Stopping);
    BOOST_TEST((**tasks->get("a2", "web")).queuedStopSignal != 0);
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "web"); }));
    // a1 ended; its emptied scope may still be in systemd's queue.
    BOOST_REQUIRE(runUntil([&] { return systemd.count("roundTrip") >= 1u; }));
    runUntil([] { return false; }, 50ms);
    BOOST_TEST(systemd.count("freezeUnit", "a2-web.scope") == 0u);
    BOOST_TEST(!finished("a2", "web"));
    systemd.release();
    BOOST_REQUIRE(runUntil([&] { return finished("a2", "web"); }));
    BOOST_TEST((**tasks->get("a2", "web")).exit.signal == SIGKILL);
    BOOST_TEST((**tasks->get("a2", "web")).queuedStopSignal == 0);
}

BOOST_FIXTURE_TEST_CASE(a_stop_that_waited_its_turn_is_sent_after_a_restart, Fixture) {
    config.stopWindow = 1;
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    start("a2", "web", taskSpec("/bin/sleep", {"1000"}));
    // a1's signal cannot reach it here (the fake has no cgroups): it holds
    // the window through its grace, until it counts as slow.
    BOOST_REQUIRE(stopTask("a1", "web", "SIGTERM", 60000));
    BOOST_REQUIRE(stopTask("a2", "web", "", 0));
    BOOST_TEST((**tasks->get("a2", "web")).queuedStopSignal != 0);
    runUntil([] { return false; }, 100ms);  // the records reach the disk
    tasks.reset();
    open();
    BOOST_TEST(state("a1", "web") == TaskState::Stopping);
    BOOST_REQUIRE(runUntil([&] { return finished("a2", "web"); }));
    BOOST_TEST((**tasks->get("a2", "web")).exit.signal == SIGKILL);
    BOOST_TEST(!finished("a1", "web"));  // its grace runs on
}

BOOST_FIXTURE_TEST_CASE(a_stop_of_an_exited_task_is_refused, Fixture) {
    open();
    start("a1", "job", taskSpec("/bin/true", {}));
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "job"); }));
    auto r = stopTask("a1", "job", "", 0);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "NotRunning");
}

BOOST_FIXTURE_TEST_CASE(a_restarted_manager_readopts_a_running_task, Fixture) {
    open();
    const auto& first = start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    const pid_t pid = first.pid;
    const auto slice = first.slice;
    tasks.reset();  // the manager goes away; the shim and the task stay
    BOOST_TEST(!processGone(pid));
    const auto weightSets = systemd.count("setUnitProperties", slice);
    open();
    const auto& r = **tasks->get("a1", "web");
    BOOST_TEST(r.state == TaskState::Running);
    BOOST_TEST(r.pid == pid);
    // Its slice from the record; its weight set again (tasks may have
    // ended meanwhile).
    BOOST_TEST(r.slice == slice);
    BOOST_TEST(systemd.count("setUnitProperties", slice) == weightSets + 1);
    BOOST_REQUIRE(stopTask("a1", "web", "", 0));
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "web"); }));
    BOOST_TEST((**tasks->get("a1", "web")).exit.signal == SIGKILL);
}

// Upgrade (issue 31): a task an older manager started flat (its record
// names no slice) is recovered, signalled, stopped and forgotten as
// before, and its allocation's next task goes nested.
BOOST_FIXTURE_TEST_CASE(a_flat_task_of_an_older_manager_is_operated_as_before, Fixture) {
    config.nestedSlices = false;
    open();
    const pid_t pid = start("a1", "old", taskSpec("/bin/sleep", {"1000"})).pid;
    BOOST_TEST((**tasks->get("a1", "old")).slice.empty());
    tasks.reset();
    config.nestedSlices = true;
    const auto calls = systemd.calls.size();
    open();
    const auto& r = **tasks->get("a1", "old");
    BOOST_TEST(r.state == TaskState::Running);
    BOOST_TEST(r.pid == pid);
    BOOST_TEST(r.slice.empty());
    BOOST_TEST(systemd.count("startSlice") == 0u);
    for (size_t i = calls; i < systemd.calls.size(); ++i) BOOST_TEST(systemd.calls[i].method != "setUnitProperties");
    BOOST_REQUIRE(stopTask("a1", "old", "", 0));
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "old"); }));
    BOOST_TEST((**tasks->get("a1", "old")).exit.signal == SIGKILL);
    BOOST_REQUIRE(forgetTask("a1", "old"));
    for (const auto& c : systemd.calls)  // no slice of its own to remove
        BOOST_TEST(!(c.method == "stopUnit" && c.unit.ends_with(".slice")));
    BOOST_TEST(start("a1", "new", taskSpec("/bin/sleep", {"1000"})).slice.rfind("nomad-share-b", 0) == 0u);
    BOOST_REQUIRE(stopTask("a1", "new", "", 0));
}

// Records across versions (issue 58): the manager always starts, and each
// record gets a clear outcome. Records written by 0.1.0's first build
// (tests/fixtures/records/old/, made by make-old-records.sh from a234530)
// are read: the exited one as exited, the running one, whose shim is long
// gone, as lost. A record cut short (a power cut mid-write) is set aside
// and its task is unknown; a record of a newer version, with a field and a
// state this one does not know, keeps its task, as lost, with the reason.
BOOST_FIXTURE_TEST_CASE(records_of_other_versions_and_cut_records_never_stop_recovery, Fixture) {
    const char* fixtures = std::getenv("TASKSCOPE_FIXTURES");
    BOOST_REQUIRE_MESSAGE(fixtures, "TASKSCOPE_FIXTURES is not set (run through ctest)");
    open();
    start("new1", "web", taskSpec("/bin/sleep", {"1000"}));
    start("new2", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(stopTask("new1", "web", "", 0));
    BOOST_REQUIRE(stopTask("new2", "web", "", 0));
    BOOST_REQUIRE(runUntil([&] { return finished("new1", "web") && finished("new2", "web"); }));
    tasks.reset();
    const auto dir = config.stateDir + "/tasks/";
    // new1's record, as this build wrote it, cut in the middle.
    auto text = common::readStateFile(dir + "new1-web.scope.json");
    BOOST_REQUIRE(text.ok());
    {
        std::ofstream(dir + "new1-web.scope.json", std::ios::trunc) << text->substr(0, text->size() / 2);
    }
    // new2's record with what a newer version might add.
    auto newer = nlohmann::json::parse(*common::readStateFile(dir + "new2-web.scope.json"));
    newer["state"] = "hibernating";
    newer["a_field_of_the_future"] = {{"x", 1}};
    {
        std::ofstream(dir + "new2-web.scope.json", std::ios::trunc) << newer.dump() << "\n";
    }
    for (const auto& f : std::filesystem::directory_iterator(std::string(fixtures) + "/records/old"))
        if (f.path().extension() == ".json") std::filesystem::copy_file(f.path(), dir + f.path().filename().string());

    open();
    BOOST_TEST(!tasks->get("new1", "web"));
    BOOST_TEST(std::filesystem::exists(dir + "new1-web.scope.json.unreadable"));
    BOOST_TEST(!std::filesystem::exists(dir + "new1-web.scope.json"));
    const auto& n2 = **tasks->get("new2", "web");
    BOOST_TEST((n2.state == TaskState::Lost));
    BOOST_TEST(n2.lostReason.find("hibernating") != std::string::npos, n2.lostReason);
    const auto& exited = **tasks->get("old2", "web");
    BOOST_TEST((exited.state == TaskState::Exited));
    BOOST_TEST(exited.exit.exitCode == 3);
    BOOST_TEST(exited.spec.command == "/bin/sleep");
    const auto& running = **tasks->get("old1", "web");
    BOOST_TEST((running.state == TaskState::Lost));
    BOOST_TEST(!running.lostReason.empty());
    BOOST_TEST(((**tasks->get("old3", "web")).state == TaskState::Lost));
    // Once more: what was set aside is not read again, and the rest is as it was.
    tasks.reset();
    open();
    BOOST_TEST(!tasks->get("new1", "web"));
    BOOST_TEST(((**tasks->get("old2", "web")).state == TaskState::Exited));
}

BOOST_FIXTURE_TEST_CASE(an_exit_while_the_manager_was_away_is_reported_after_restart, Fixture) {
    open();
    const pid_t pid = start("a1", "web", taskSpec("/bin/sleep", {"1000"})).pid;
    tasks.reset();
    ::kill(pid, SIGKILL);
    const auto exitFile = config.stateDir + "/exits/a1-web.scope";
    // The shim writes the record on its own; nobody runs a loop meanwhile.
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!std::filesystem::exists(exitFile) && std::chrono::steady_clock::now() < deadline) ::usleep(10000);
    BOOST_REQUIRE(std::filesystem::exists(exitFile));
    events.events.clear();
    open();
    const auto& r = **tasks->get("a1", "web");
    BOOST_TEST(r.state == TaskState::Exited);
    BOOST_TEST(r.exit.signal == SIGKILL);
    BOOST_TEST(events.count("exited") == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_task_whose_shim_vanished_is_lost_after_restart, Fixture) {
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    const pid_t shim = (**tasks->get("a1", "web")).shimPid;
    tasks.reset();
    // SIGKILL the shim: no exit record can be written.
    ::kill(shim, SIGKILL);
    BOOST_REQUIRE(runUntil([&] { return processGone(shim); }));
    open();
    BOOST_TEST((**tasks->get("a1", "web")).state == TaskState::Lost);
}

// A manager that dies mid-start (the scope asked for, the go not sent): the
// shim leaves without running the task and marks that; the next manager
// removes the task instead of reporting it lost, so the caller, who was
// never told it started, can simply ask again. A shim killed outright
// leaves no mark, and its task stays lost (above).
BOOST_FIXTURE_TEST_CASE(a_start_cut_off_by_the_managers_death_leaves_no_task, Fixture) {
    open();
    systemd.hold("startScope");
    tasks->start("a1", "web", taskSpec("/bin/sleep", {"1000"}), [](auto) {});
    untilAsked("startScope", 1);
    const pid_t shim = (**tasks->get("a1", "web")).shimPid;
    tasks.reset();  // its pending record write finishes; the go pipe closes
    systemd.parked.clear();
    BOOST_REQUIRE(runUntil([&] { return processGone(shim); }));
    BOOST_TEST(std::filesystem::exists(config.stateDir + "/tasks/a1-web.scope.json"));
    BOOST_TEST(std::filesystem::exists(config.stateDir + "/exits/a1-web.scope.aborted"));
    systemd.hold("startScope", false);
    // And the dirs of a start cut off before its record was written.
    std::filesystem::create_directories(config.stateDir + "/tasks-root/cut/tasks/t");
    open();
    BOOST_TEST(!std::filesystem::exists(config.stateDir + "/tasks-root/cut"));
    BOOST_TEST(!tasks->get("a1", "web"));
    // The record goes through the writer, in order with any write pending.
    BOOST_TEST(runUntil([&] { return !std::filesystem::exists(config.stateDir + "/tasks/a1-web.scope.json"); }));
    BOOST_TEST(!std::filesystem::exists(config.stateDir + "/exits/a1-web.scope.aborted"));
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_TEST(state("a1", "web") == TaskState::Running);
}

// A start looks for an exit record left by an earlier task of its name
// only where one is suspected (a look-up waits for the exits directory's
// lock, seconds in a drain). One left where nothing suspected it would be
// taken, at the next restart, for the new task's exit: recovery removes
// every exit record no task record names.
BOOST_FIXTURE_TEST_CASE(an_exit_record_no_task_names_is_removed_at_startup, Fixture) {
    open();
    const pid_t pid = start("a1", "web", taskSpec("/bin/sleep", {"1000"})).pid;
    ::kill(pid, SIGKILL);
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "web"); }));
    const auto exitFile = config.stateDir + "/exits/a1-web.scope";
    const auto text = common::readFile(exitFile);
    BOOST_REQUIRE(text);
    BOOST_REQUIRE(forgetTask("a1", "web"));
    BOOST_REQUIRE(!std::filesystem::exists(exitFile));
    // As a forget whose removal failed, or an older version, leaves it.
    BOOST_REQUIRE(std::ofstream(exitFile) << *text);
    tasks.reset();
    open();
    BOOST_TEST(!std::filesystem::exists(exitFile));
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    tasks.reset();
    open();
    BOOST_TEST(state("a1", "web") == TaskState::Running);
}

// A start that failed with its shim spawned may leave the shim's aborted
// mark or exit record: the next start of the name looks, and removes it.
BOOST_FIXTURE_TEST_CASE(a_start_after_a_failed_one_of_its_name_removes_what_it_left, Fixture) {
    open();
    auto r = tryStart("a1", "web", taskSpec(vanishingBinary(), {}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "ExecFailed");
    const auto exitFile = config.stateDir + "/exits/a1-web.scope";
    // Whatever it left, as it would be if its removal had failed.
    BOOST_REQUIRE(std::ofstream(exitFile) << "exit_code=3\n");
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_TEST(!std::filesystem::exists(exitFile));
    tasks.reset();
    open();
    BOOST_TEST(state("a1", "web") == TaskState::Running);
}

// A shim killed while its task runs on (someone's kill -9, an OOM kill in
// the shims' scope): the task is never reported ended while its scope has
// processes; once it is empty the task is lost, with the reason.
BOOST_FIXTURE_TEST_CASE(a_task_whose_shim_is_killed_runs_on_until_its_scope_is_empty, Fixture) {
    open();
    const auto& rec = start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(!rec.cgroup.empty());
    // cgroup v1 here (host.version V1): processes are tracked in name=systemd.
    const auto dir = host.root + "/systemd" + rec.cgroup;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/cgroup.procs") << rec.pid << "\n";
    const pid_t shim = rec.shimPid;
    ::kill(shim, SIGKILL);
    runUntil([] { return false; }, 1500ms);
    BOOST_TEST(state("a1", "web") == TaskState::Running);
    BOOST_TEST(events.count("exited") == 0u);
    // A restart in between finds it running too.
    tasks.reset();
    open();
    BOOST_TEST(state("a1", "web") == TaskState::Running);
    std::ofstream(dir + "/cgroup.procs", std::ios::trunc) << "";
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "web"); }, 5s));
    const auto& r = **tasks->get("a1", "web");
    BOOST_TEST(r.state == TaskState::Lost);
    BOOST_TEST(r.lostReason.find("shim was killed") != std::string::npos);
    BOOST_TEST(events.count("exited") == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_failed_start_scope_leaves_no_record_no_process_no_spool, Fixture) {
    open();
    systemd.failNext("startScope", common::makeError("SystemdFailed", "start scope: job failed"));
    auto r = tryStart("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "SystemdFailed");
    BOOST_TEST(!tasks->get("a1", "web"));
    BOOST_TEST(tasks->list().empty());
    BOOST_TEST(recordsIn(config.stateDir + "/tasks") == 0u);
    BOOST_TEST(filesIn(config.logSpoolDir) == 0u);
    BOOST_REQUIRE(systemd.lastStartPids.size() == 1u);
    const auto pid = static_cast<pid_t>(systemd.lastStartPids[0]);
    BOOST_TEST(runUntil([&] { return processGone(pid); }));
    BOOST_TEST(events.count("added") == 0u);
    // Told to those who did not hear the answer (TaskStartFailed), with the
    // error's name, once its undo has run.
    BOOST_TEST(events.count("start failed SystemdFailed") == 1u);
    // The same task can start afterwards.
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
}

BOOST_FIXTURE_TEST_CASE(a_command_that_cannot_run_leaves_nothing_and_stops_its_scope, Fixture) {
    open();
    const auto bin = vanishingBinary();
    auto r = tryStart("a1", "web", taskSpec(bin, {}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "ExecFailed");
    BOOST_TEST(!tasks->get("a1", "web"));
    BOOST_TEST(recordsIn(config.stateDir + "/tasks") == 0u);
    BOOST_TEST(systemd.count("stopUnit", "a1-web.scope") == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_failed_start_gives_reserved_cores_back, Fixture) {
    usable = {0, 1, 2, 3};
    host.version = scope::CgroupVersion::V2;  // reservations exist only on cgroup v2
    open();
    BOOST_TEST(tasks->sharedCpus() == "0-3");
    systemd.failNext("startScope", common::makeError("SystemdFailed", "start scope: job failed"));
    auto r = tryStart("a1", "db", taskSpec("/bin/sleep", {"1000"}, {{"resources", {{"cores", 2}}}}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(tasks->sharedCpus() == "0-3");
    const auto& ok = start("a1", "db", taskSpec("/bin/sleep", {"1000"}, {{"resources", {{"cores", 2}}}}));
    BOOST_TEST(ok.reservedCores);
    BOOST_TEST(tasks->sharedCpus() == "2-3");
}

BOOST_FIXTURE_TEST_CASE(a_reservation_moves_every_flat_shared_task_to_the_new_pool, Fixture) {
    usable = {0, 1, 2, 3};
    host.version = scope::CgroupVersion::V2;
    config.nestedSlices = false;  // as a manager before the nested layout
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    start("a1", "api", taskSpec("/bin/sleep", {"1000"}));
    const auto before = systemd.count("setUnitProperties");
    start("a1", "db", taskSpec("/bin/sleep", {"1000"}, {{"resources", {{"cores", 1}}}}));
    // Flat: one SetUnitProperties per shared task.
    BOOST_TEST(systemd.count("setUnitProperties") - before == 2u);
    BOOST_TEST(common::formatCpuList((**tasks->get("a1", "web")).cpus) == "1-3");
    BOOST_TEST((**tasks->get("a1", "web")).slice.empty());
}

// Issue 31: however many shared tasks, one call on their share slice.
BOOST_FIXTURE_TEST_CASE(a_reservation_moves_the_nested_shared_tasks_with_one_call, Fixture) {
    usable = {0, 1, 2, 3};
    host.version = scope::CgroupVersion::V2;
    open();
    for (const char* t : {"web", "api", "cache", "worker"}) start("a1", t, taskSpec("/bin/sleep", {"1000"}));
    start("a2", "web", taskSpec("/bin/sleep", {"1000"}));
    // A shared scope carries no AllowedCPUs: its share slice's are its.
    BOOST_TEST(!systemd.propertyOf("a1-web.scope", "AllowedCPUs").has_value());
    BOOST_TEST(systemd.propertyOf("nomad-share.slice", "AllowedCPUs")->get<std::vector<uint8_t>>() ==
               std::vector<uint8_t>{0xf});
    const auto before = systemd.count("setUnitProperties", "nomad-share.slice");
    const auto& db = start("a1", "db", taskSpec("/bin/sleep", {"1000"}, {{"resources", {{"cores", 1}}}}));
    BOOST_TEST(db.slice == "nomad-reserve-a1.slice");
    BOOST_TEST(common::formatCpuList(db.cpus) == "0");
    BOOST_REQUIRE(runUntil([&] { return common::formatCpuList((**tasks->get("a1", "web")).cpus) == "1-3"; }));
    BOOST_TEST(systemd.count("setUnitProperties", "nomad-share.slice") - before == 1u);
    for (const char* t : {"web", "api", "cache", "worker"})
        BOOST_TEST(systemd.count("setUnitProperties", std::string("a1-") + t + ".scope") == 0u);
    BOOST_TEST(systemd.propertyOf("nomad-share.slice", "AllowedCPUs")->get<std::vector<uint8_t>>() ==
               std::vector<uint8_t>{0xe});
    BOOST_TEST(common::formatCpuList((**tasks->get("a2", "web")).cpus) == "1-3");
}

// Issue 31: the allocation's slice is made before its first task's scope,
// with its weight, and goes with its last forgotten task.
BOOST_FIXTURE_TEST_CASE(an_allocation_slice_lives_from_its_first_task_to_its_last, Fixture) {
    open();
    const auto& web = start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    const auto slice = web.slice;
    BOOST_TEST(slice.rfind("nomad-share-b", 0) == 0u);
    // Made in the scope's own call (systemd records its aux units after it).
    BOOST_TEST(systemd.count("auxSlice", slice) == 1u);
    BOOST_TEST(systemd.count("startSlice") == 0u);
    size_t sliceAt = 0, scopeAt = 0;
    for (size_t i = 0; i < systemd.calls.size(); ++i) {
        if (systemd.calls[i].method == "auxSlice" && systemd.calls[i].unit == slice) sliceAt = i;
        if (systemd.calls[i].method == "startScope" && systemd.calls[i].unit == "a1-web.scope") scopeAt = i;
    }
    BOOST_TEST(scopeAt < sliceAt);
    BOOST_TEST(sliceAt - scopeAt <= 3u);
    std::string inSlice;
    for (const auto& p : systemd.scopes.at("a1-web.scope").properties)
        if (p.get<0>() == "Slice") inSlice = p.get<1>().get<std::string>();
    BOOST_TEST(inSlice == slice);
    BOOST_TEST(systemd.propertyOf(slice, "CPUWeight").has_value());
    start("a1", "db", taskSpec("/bin/true", {}));
    BOOST_TEST(systemd.count("auxSlice", slice) + systemd.count("startSlice", slice) == 1u);  // there already
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "db"); }));
    BOOST_REQUIRE(forgetTask("a1", "db"));
    BOOST_TEST(systemd.count("stopUnit", slice) == 0u);
    BOOST_REQUIRE(stopTask("a1", "web", "", 0));
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "web"); }));
    BOOST_REQUIRE(forgetTask("a1", "web"));
    BOOST_REQUIRE(runUntil([&] { return systemd.count("stopUnit", slice) == 1u; }));
}

// Forgetting asks nothing of systemd (the scope was made to be collected
// when it ends), so a full node's forgets never queue behind its stops.
BOOST_FIXTURE_TEST_CASE(forget_asks_nothing_of_systemd, Fixture) {
    open();
    start("a1", "job", taskSpec("/bin/true", {}));
    std::string collect;
    for (const auto& p : systemd.scopes.at("a1-job.scope").properties)
        if (p.get<0>() == "CollectMode") collect = p.get<1>().get<std::string>();
    BOOST_TEST(collect == "inactive-or-failed");
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "job"); }));
    // The end's own calls (the kill of what the task left: freeze, kill,
    // thaw on v1) first: they were still in flight under load.
    for (size_t seen = ~size_t{0}; seen != systemd.calls.size();) {
        seen = systemd.calls.size();
        runUntil([] { return false; }, 200ms);
    }
    const auto before = systemd.calls.size();
    const auto slice = (**tasks->get("a1", "job")).slice;
    BOOST_REQUIRE(forgetTask("a1", "job"));
    // Nothing about its scope; its allocation's slice (empty: no task is
    // left in it) goes with the allocation's last task, not waited for.
    runUntil([] { return false; }, 50ms);
    BOOST_TEST(systemd.calls.size() == before + 1);
    BOOST_TEST(systemd.calls.back().method == "stopUnit");
    BOOST_TEST(systemd.calls.back().unit == slice);
    BOOST_TEST(!tasks->get("a1", "job"));
    BOOST_TEST(events.count("removed") == 1u);
    BOOST_TEST(recordsIn(config.stateDir + "/tasks") == 0u);
    // The name is free again.
    start("a1", "job", taskSpec("/bin/true", {}));
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "job"); }));
}

// A forget's files (exit record, process spec, record) go off the loop,
// in one round of the record writer; the forget is answered once all are
// gone, so the next task of the name never loses its exit record to them.
BOOST_FIXTURE_TEST_CASE(a_forget_is_answered_with_every_file_of_the_task_gone, Fixture) {
    open();
    start("a1", "job", taskSpec("/bin/sh", {"-c", "exit 3"}));
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "job"); }));
    BOOST_TEST(filesIn(config.stateDir + "/exits") == 1u);
    BOOST_TEST(filesIn(config.stateDir + "/process") == 1u);
    BOOST_REQUIRE(forgetTask("a1", "job"));
    BOOST_TEST(filesIn(config.stateDir + "/exits") == 0u);
    BOOST_TEST(filesIn(config.stateDir + "/process") == 0u);
    BOOST_TEST(recordsIn(config.stateDir + "/tasks") == 0u);
    start("a1", "job", taskSpec("/bin/sh", {"-c", "exit 5"}));
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "job"); }));
    BOOST_TEST((**tasks->get("a1", "job")).exit.exitCode == 5);
    BOOST_TEST(filesIn(config.stateDir + "/exits") == 1u);
}

// The shim holds the task's log fifos; the manager holds nothing per task.
BOOST_FIXTURE_TEST_CASE(a_task_with_logs_costs_the_manager_no_descriptor, Fixture) {
    open();
    start("a1", "warm", taskSpec("/bin/sleep", {"1000"}));  // lazily opened things (journal, /dev/null) first
    const auto before = settledFds();
    // A start is answered before its record's second write (its cgroup
    // known) is on disk: that write's file may still be open for a moment
    // (seen under load), so the count is awaited, not sampled.
    const auto& web = start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_TEST(runUntil([&] { return openFds() == before; }), openFds() << " open, " << before << " before");
    start("a1", "quiet", taskSpec("/bin/sleep", {"1000"}, {{"logs", false}}));
    BOOST_TEST(runUntil([&] { return openFds() == before; }), openFds() << " open, " << before << " before");
    // ... and the shim does: both fifos, and the release fifo it waits on.
    size_t held = 0;
    for (const auto& f : std::filesystem::directory_iterator("/proc/" + std::to_string(web.shimPid) + "/fd")) {
        std::error_code ec;
        const auto target = std::filesystem::read_symlink(f.path(), ec).string();
        if (target.rfind(config.logSpoolDir + "/a1-web.scope.", 0) == 0) ++held;
    }
    BOOST_TEST(held == 3u);
}

// The shim of a task that ran stays, holding the fifos, until released; a
// shim whose task never ran does not wait.
BOOST_FIXTURE_TEST_CASE(a_shim_keeps_the_fifos_of_an_ended_task_until_released, Fixture) {
    open();
    const auto& rec = start("a1", "job", taskSpec("/bin/sh", {"-c", "echo kept"}));
    const auto shim = rec.shimPid;
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "job"); }));
    BOOST_TEST(::kill(shim, 0) == 0);
    // What the task wrote is still in the pipe, read through a new open.
    common::UniqueFd out(::open((config.logSpoolDir + "/a1-job.scope.stdout").c_str(), O_RDONLY | O_NONBLOCK));
    BOOST_REQUIRE(out);
    char buf[16] = {};
    BOOST_TEST(::read(out.get(), buf, sizeof buf) == 5);
    BOOST_TEST(std::string(buf) == "kept\n");
    BOOST_REQUIRE(common::pokeFifo(config.logSpoolDir + "/a1-job.scope.release"));
    int status = 0;
    BOOST_TEST(::waitpid(shim, &status, 0) == shim);
    BOOST_TEST(WIFEXITED(status));
}

// The streamer removes an allocation's log directory with its last task;
// it never learns of a task whose logs are off, so such a task makes none.
BOOST_FIXTURE_TEST_CASE(a_task_with_logs_off_makes_no_log_directory, Fixture) {
    open();
    start("quiet-alloc", "quiet", taskSpec("/bin/sleep", {"1000"}, {{"logs", false}}));
    BOOST_TEST(!std::filesystem::exists(config.stateDir + "/logs/quiet-alloc"));
    start("loud-alloc", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_TEST(std::filesystem::is_directory(config.stateDir + "/logs/loud-alloc"));
}

// (x-a, b) and (x, a-b) both make x-a-b.scope: the second is refused, and
// no call on it ever reaches the first.
BOOST_FIXTURE_TEST_CASE(tasks_whose_units_collide_are_kept_apart, Fixture) {
    open();
    const pid_t first = start("x-a", "b", taskSpec("/bin/sleep", {"1000"})).pid;
    auto second = tryStart("x", "a-b", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(!second);
    BOOST_TEST(second.error().name == "UnitNameCollision");
    BOOST_TEST(second.error().message.find("x-a/b") != std::string::npos);
    BOOST_TEST(systemd.count("startScope") == 1u);

    auto got = tasks->get("x", "a-b");
    BOOST_REQUIRE(!got);
    BOOST_TEST(got.error().name == "NoSuchTask");
    auto stopped = stopTask("x", "a-b", "", 0);
    BOOST_REQUIRE(!stopped);
    BOOST_TEST(stopped.error().name == "NoSuchTask");
    BOOST_TEST(!wait([&](TaskRegistry::Done done) { tasks->signal("x", "a-b", "SIGKILL", std::move(done)); }));
    BOOST_TEST(!updateTask("x", "a-b", R"({"pids_max": 10})"));
    BOOST_TEST(!forgetTask("x", "a-b"));
    BOOST_TEST(systemd.count("killUnit") == 0u);
    BOOST_TEST(systemd.count("setUnitProperties") == 0u);
    BOOST_TEST(state("x-a", "b") == TaskState::Running);
    BOOST_TEST(!processGone(first));

    // Once the first is gone and forgotten, the unit name is free again.
    BOOST_REQUIRE(stopTask("x-a", "b", "", 0));
    BOOST_REQUIRE(runUntil([&] { return finished("x-a", "b"); }));
    BOOST_REQUIRE(forgetTask("x-a", "b"));
    start("x", "a-b", taskSpec("/bin/sleep", {"1000"}));
    BOOST_TEST(state("x", "a-b") == TaskState::Running);
}

BOOST_FIXTURE_TEST_CASE(colliding_tasks_stay_apart_after_a_restart, Fixture) {
    open();
    start("x-a", "b", taskSpec("/bin/sleep", {"1000"}));
    tasks.reset();
    open();
    BOOST_TEST(state("x-a", "b") == TaskState::Running);
    BOOST_TEST(!tasks->get("x", "a-b"));
    auto second = tryStart("x", "a-b", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(!second);
    BOOST_TEST(second.error().name == "UnitNameCollision");
}

BOOST_FIXTURE_TEST_CASE(a_name_no_unit_can_have_is_invalid_not_missing, Fixture) {
    open();
    std::string bad = "we";
    bad += '\x01';  // a control character
    auto r = tasks->get("a1", bad);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "InvalidName");
}

// A task's name is the stem of its log files: a slash is refused before
// anything exists, and a read of such a name says why rather than "no task".
BOOST_FIXTURE_TEST_CASE(a_task_name_with_a_slash_is_refused_and_leaves_nothing, Fixture) {
    open();
    auto r = tryStart("a1", "web/1", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "InvalidName");
    BOOST_TEST(r.error().message.find("'/'") != std::string::npos);
    BOOST_TEST(tasks->list().empty());
    BOOST_TEST(systemd.count("startScope") == 0u);
    BOOST_TEST(!std::filesystem::exists(config.stateDir + "/logs/a1"));
    auto got = tasks->get("a1", "web/1");
    BOOST_REQUIRE(!got);
    BOOST_TEST(got.error().name == "InvalidName");
    // The allocation may have one: it is only ever a directory's escaped name.
    start("a/1", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_TEST(state("a/1", "web") == TaskState::Running);
}

// The entry exists from the request on: while systemd works on a start, the
// task reads as "starting" (at once), a second start of it is refused, and
// its other requests wait for it, in order.
BOOST_FIXTURE_TEST_CASE(a_start_under_way_is_a_starting_task_and_its_requests_wait_in_order, Fixture) {
    open();
    systemd.hold("startScope");
    std::vector<std::string> answers;
    tasks->start("a1", "web", taskSpec("/bin/sleep", {"1000"}),
                 [&](common::Result<const TaskRecord*> r) { answers.push_back(r ? "started" : r.error().name); });
    BOOST_TEST(state("a1", "web") == TaskState::Starting);
    BOOST_TEST(tasks->list().size() == 1u);
    auto again = tryStart("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(!again);
    BOOST_TEST(again.error().name == "TaskExists");
    tasks->update("a1", "web", R"({"pids_max": 10})",
                  [&](common::Result<void> r) { answers.push_back(r ? "updated" : r.error().name); });
    tasks->stop("a1", "web", "", 0, [&](common::Result<void> r) { answers.push_back(r ? "stopped" : r.error().name); });
    runUntil([] { return false; }, 50ms);
    BOOST_TEST(answers.empty());  // systemd has not answered the start
    BOOST_TEST(systemd.count("setUnitProperties") == 0u);

    systemd.release();
    BOOST_REQUIRE(runUntil([&] { return answers.size() == 3; }));
    BOOST_TEST(answers == (std::vector<std::string>{"started", "updated", "stopped"}), "answers in order");
    BOOST_TEST(systemd.count("startScope") == 1u);
    BOOST_TEST(systemd.count("setUnitProperties", "a1-web.scope") == 1u);
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "web"); }));
}

// One task's start waiting for systemd holds no other task back.
BOOST_FIXTURE_TEST_CASE(different_tasks_never_wait_for_each_other, Fixture) {
    open();
    systemd.hold("startScope");
    std::optional<common::Result<const TaskRecord*>> slow, fast;
    tasks->start("a1", "slow", taskSpec("/bin/sleep", {"1000"}), [&](auto r) { slow = std::move(r); });
    tasks->start("a1", "fast", taskSpec("/bin/sleep", {"1000"}), [&](auto r) { fast = std::move(r); });
    untilAsked("startScope", 2);
    BOOST_TEST(systemd.release("a1-fast.scope") == 1u);
    BOOST_REQUIRE(runUntil([&] { return fast.has_value(); }));
    BOOST_TEST(static_cast<bool>(*fast));
    BOOST_TEST(!slow.has_value());
    BOOST_TEST(state("a1", "slow") == TaskState::Starting);
    BOOST_TEST(state("a1", "fast") == TaskState::Running);
    // Reads answer from memory meanwhile.
    BOOST_TEST(tasks->list().size() == 2u);
    systemd.release();
    BOOST_REQUIRE(runUntil([&] { return slow.has_value(); }));
    BOOST_TEST(static_cast<bool>(*slow));
}

// systemd takes unit names up to 255 characters, but the files named after
// the unit add a suffix: a name that long is refused up front (without logs
// its record could not be written and the manager aborted; with logs,
// mkfifo failed), and the longest taken runs and ends with its exit code
// kept.
BOOST_FIXTURE_TEST_CASE(a_unit_name_too_long_for_taskscopes_files_is_refused, Fixture) {
    open();
    const std::string alloc(240, 'a');  // a-...-web.scope: 250 characters
    for (bool logs : {false, true}) {
        auto r = tryStart(alloc, "web", taskSpec("/bin/sleep", {"1000"}, {{"logs", logs}}));
        BOOST_REQUIRE(!r);
        BOOST_TEST(r.error().name == "InvalidName");
        BOOST_TEST(r.error().message.find("at most 240") != std::string::npos);
    }
    BOOST_TEST(tasks->list().empty());
    BOOST_TEST(systemd.count("startScope") == 0u);

    // Nested, the allocation's slice must fit a unit name too (with room
    // for its bucket's prefix and an overflow suffix): refused up front,
    // named, nothing made.
    const std::string longest(230, 'b');  // + "-web.scope": 240
    auto r = tryStart(longest, "web", taskSpec("/bin/sh", {"-c", "exit 5"}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "InvalidName");
    BOOST_TEST(r.error().message.find("the slice of alloc_id") != std::string::npos);
    BOOST_TEST(tasks->list().empty());
    const std::string longestNested(226, 'c');  // nomad-share-bXX-<226>.slice: 248
    start(longestNested, "web", taskSpec("/bin/sh", {"-c", "exit 5"}));
    BOOST_REQUIRE(runUntil([&] { return finished(longestNested, "web"); }));
    // Flat, only the unit name counts.
    tasks.reset();
    config.nestedSlices = false;
    open();
    start(longest, "web", taskSpec("/bin/sh", {"-c", "exit 5"}));
    BOOST_REQUIRE(runUntil([&] { return finished(longest, "web"); }));
    BOOST_TEST((*tasks->get(longest, "web"))->exit.exitCode == 5);
}

// SIGTERM drains: the start under way finishes (its task runs, its caller
// is answered), a new one is refused with nothing made, and the daemon is
// let go only once no start is left.
BOOST_FIXTURE_TEST_CASE(a_drain_finishes_the_starts_under_way_and_refuses_new_ones, Fixture) {
    open();
    systemd.hold("startScope");
    std::optional<common::Result<const TaskRecord*>> first;
    tasks->start("a1", "web", taskSpec("/bin/sleep", {"1000"}), [&](auto r) { first = std::move(r); });
    untilAsked("startScope", 1);
    bool drained = false;
    tasks->drain(10s, [&] { drained = true; });
    auto refused = tryStart("a1", "late", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(!refused);
    BOOST_TEST(refused.error().name == "ShuttingDown");
    BOOST_TEST(!tasks->get("a1", "late"));
    BOOST_TEST(!std::filesystem::exists(config.stateDir + "/logs/a1/late.stdout.0"));
    runUntil([] { return false; }, 200ms);
    BOOST_TEST(!drained);
    BOOST_TEST(tasks->startsUnderWay() == 1u);

    systemd.release();
    BOOST_REQUIRE(runUntil([&] { return drained; }));
    BOOST_REQUIRE(first.has_value());
    BOOST_TEST(static_cast<bool>(*first));
    BOOST_TEST(state("a1", "web") == TaskState::Running);
    BOOST_TEST(systemd.count("startScope") == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_drain_with_nothing_under_way_lets_go_at_once, Fixture) {
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    bool drained = false;
    tasks->drain(10s, [&] { drained = true; });
    BOOST_TEST(drained);
}

// Requests queued behind a start that fails are answered, not dropped.
BOOST_FIXTURE_TEST_CASE(requests_behind_a_failed_start_get_no_such_task, Fixture) {
    open();
    systemd.hold("startScope");
    systemd.failNext("startScope", common::makeError("SystemdFailed", "start scope: job failed"));
    std::vector<std::string> answers;
    tasks->start("a1", "web", taskSpec("/bin/sleep", {"1000"}),
                 [&](auto r) { answers.push_back(r ? "started" : r.error().name); });
    tasks->stop("a1", "web", "", 0, [&](auto r) { answers.push_back(r ? "stopped" : r.error().name); });
    untilAsked("startScope", 1);
    systemd.release();
    BOOST_REQUIRE(runUntil([&] { return answers.size() == 2; }));
    BOOST_TEST(answers == (std::vector<std::string>{"SystemdFailed", "NoSuchTask"}), "answers");
    BOOST_TEST(!tasks->get("a1", "web"));
}

// A burst of reservations costs each shared task one SetUnitProperties in
// flight, not one per change.
BOOST_FIXTURE_TEST_CASE(the_shared_pool_is_applied_once_per_task_while_calls_are_pending, Fixture) {
    usable = {0, 1, 2, 3};
    host.version = scope::CgroupVersion::V2;
    config.nestedSlices = false;  // flat tasks: one call each
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    systemd.hold("setUnitProperties");
    start("a1", "db1", taskSpec("/bin/sleep", {"1000"}, {{"resources", {{"cores", 1}}}}));
    start("a1", "db2", taskSpec("/bin/sleep", {"1000"}, {{"resources", {{"cores", 1}}}}));
    BOOST_TEST(systemd.count("setUnitProperties", "a1-web.scope") == 1u);  // db2's change waits behind db1's
    systemd.hold("setUnitProperties", false);
    systemd.release();
    BOOST_REQUIRE(runUntil([&] { return common::formatCpuList((**tasks->get("a1", "web")).cpus) == "2-3"; }));
    BOOST_TEST(systemd.count("setUnitProperties", "a1-web.scope") == 2u);
}

BOOST_FIXTURE_TEST_CASE(a_refused_spec_leaves_no_entry, Fixture) {
    open();
    auto r = tryStart("a1", "web", R"({"command": "/bin/true", "bogus": 1})");
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "InvalidSpec");
    BOOST_TEST(!tasks->get("a1", "web"));
    BOOST_TEST(tasks->list().empty());
}

// A start is admitted at once and its spec read on a later turn of the
// loop: a burst of StartTask calls is answered from memory (reads queued
// behind it wait for none of their spec work), and a spec refused then
// still leaves nothing.
BOOST_FIXTURE_TEST_CASE(a_start_is_admitted_at_once_and_its_spec_read_on_a_later_turn, Fixture) {
    open();
    std::optional<common::Result<const TaskRecord*>> bad, good;
    tasks->start("a1", "bad", R"({"command": "/bin/true", "bogus": 1})",
                 [&](common::Result<const TaskRecord*> r) { bad = std::move(r); });
    tasks->start("a1", "good", taskSpec("/bin/sleep", {"1000"}),
                 [&](common::Result<const TaskRecord*> r) { good = std::move(r); });
    BOOST_TEST(!bad.has_value());
    BOOST_TEST(state("a1", "bad") == TaskState::Starting);
    BOOST_TEST(state("a1", "good") == TaskState::Starting);
    BOOST_TEST(!std::filesystem::exists(config.stateDir + "/logs/a1"));  // nothing made yet
    BOOST_REQUIRE(runUntil([&] { return bad.has_value() && good.has_value(); }));
    BOOST_REQUIRE(!*bad);
    BOOST_TEST(bad->error().name == "InvalidSpec");
    BOOST_TEST(!tasks->get("a1", "bad"));
    BOOST_REQUIRE_MESSAGE(*good, (*good ? "" : good->error().message));
    BOOST_TEST(state("a1", "good") == TaskState::Running);
    BOOST_TEST(tasks->list().size() == 1u);
}

// A manager gone before its posted start ran: the loop (which outlives it
// in this tier) runs nothing of it.
BOOST_FIXTURE_TEST_CASE(a_start_posted_by_a_manager_since_destroyed_does_nothing, Fixture) {
    open();
    bool answered = false;
    tasks->start("a1", "web", taskSpec("/bin/sleep", {"1000"}), [&](common::Result<const TaskRecord*>) { answered = true; });
    tasks.reset();
    runUntil([] { return false; }, 100ms);
    BOOST_TEST(!answered);
    BOOST_TEST(systemd.count("startScope") == 0u);
}

namespace {

// Puts a record into the exits directory the way the shim does (rename).
void writeExitRecord(const std::string& stateDir, const std::string& unit, const std::string& text) {
    const auto tmp = stateDir + "/exits/." + unit + ".test";
    {
        std::ofstream out(tmp);
        out << text;
    }
    std::filesystem::rename(tmp, stateDir + "/exits/" + unit);
}

}  // namespace

// An unreadable exit record is read again a few times, then the task is
// lost with the reason: never "running" forever.
BOOST_FIXTURE_TEST_CASE(an_unreadable_exit_record_makes_the_task_lost_not_running, Fixture) {
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    writeExitRecord(config.stateDir, "a1-web.scope", "garbage\n");
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "web"); }));
    const auto& r = **tasks->get("a1", "web");
    BOOST_TEST(r.state == TaskState::Lost);
    BOOST_TEST(r.lostReason.find("exit record could not be read") != std::string::npos);
    BOOST_TEST(r.lostReason.find("no exit_code") != std::string::npos);
    BOOST_TEST(events.count("exited") == 1u);
    // Its leftovers are killed like any ended task's (v1: through systemd).
    BOOST_TEST(runUntil([&] { return systemd.count("killUnit", "a1-web.scope") >= 1u; }));
    tasks.reset();
    open();
    BOOST_TEST((**tasks->get("a1", "web")).state == TaskState::Lost);
    BOOST_TEST(!(**tasks->get("a1", "web")).lostReason.empty());
}

BOOST_FIXTURE_TEST_CASE(an_exit_record_readable_on_a_retry_is_collected, Fixture) {
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    // The shim's own record would race ours; keep the task alive and write both.
    writeExitRecord(config.stateDir, "a1-web.scope", "garbage\n");
    // One turn of the loop sees it fail once; the retry then finds the good one.
    runUntil([] { return false; }, 30ms);
    BOOST_TEST(state("a1", "web") == TaskState::Running);
    writeExitRecord(config.stateDir, "a1-web.scope", "exit_code=7\nsignal=0\noom_killed=0\nfinished_at_us=1\n");
    BOOST_REQUIRE(runUntil([&] { return finished("a1", "web"); }));
    const auto& r = **tasks->get("a1", "web");
    BOOST_TEST(r.state == TaskState::Exited);
    BOOST_TEST(r.exit.exitCode == 7);
}

BOOST_FIXTURE_TEST_CASE(a_failed_rollback_stop_reaches_the_caller, Fixture) {
    open();
    const auto bin = vanishingBinary();
    systemd.failNext("stopUnit", common::makeError("SystemdFailed", "stop a1-web.scope: access denied"));
    auto r = tryStart("a1", "web", taskSpec(bin, {}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "ExecFailed");
    BOOST_TEST(r.error().message.find("its scope was not stopped") != std::string::npos);
    BOOST_TEST(r.error().message.find("access denied") != std::string::npos);
    BOOST_TEST(!tasks->get("a1", "web"));
}

namespace {

// Lowers this process's soft RLIMIT_NOFILE for one test.
struct FdLimit {
    rlimit saved{};
    explicit FdLimit(rlim_t soft) {
        ::getrlimit(RLIMIT_NOFILE, &saved);
        rlimit lowered = saved;
        lowered.rlim_cur = soft;
        BOOST_REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
    }
    ~FdLimit() { ::setrlimit(RLIMIT_NOFILE, &saved); }
};

}  // namespace

// Measured in the guest: ~500 tasks into a 1024 limit every start failed
// with "dup pipe: Too many open files". Near the limit a start is refused
// up front, named, with the numbers, and nothing of it exists.
BOOST_FIXTURE_TEST_CASE(a_start_near_the_descriptor_limit_is_refused_with_the_numbers, Fixture) {
    open();
    start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    const auto startsBefore = systemd.count("startScope");
    {
        FdLimit limit(openFds() + manager::kFdsReserved + manager::kFdsPerStart - 1);
        auto r = tryStart("a1", "api", taskSpec("/bin/sleep", {"1000"}));
        BOOST_REQUIRE(!r);
        BOOST_TEST(r.error().name == "ResourceExhausted");
        BOOST_TEST(r.error().message.find("file descriptors") != std::string::npos);
        BOOST_TEST(r.error().message.find("LimitNOFILE=") != std::string::npos);
        BOOST_TEST(r.error().message.find("Too many open files") == std::string::npos);
    }
    BOOST_TEST(!tasks->get("a1", "api"));
    BOOST_TEST(systemd.count("startScope") == startsBefore);
    BOOST_TEST(filesIn(config.logSpoolDir) == 4u);  // web's three fifos and description only
    BOOST_TEST(recordsIn(config.stateDir + "/tasks") == 1u);
    // With room again the same start works.
    start("a1", "api", taskSpec("/bin/sleep", {"1000"}));
}

// What a start holds while systemd works, and what a task keeps after.
BOOST_FIXTURE_TEST_CASE(a_start_stays_within_its_descriptor_budget, Fixture) {
    open();
    start("a1", "warm", taskSpec("/bin/sleep", {"1000"}));  // lazily opened things (journal, /dev/null) first
    const auto before = settledFds();
    size_t during = 0;
    systemd.duringNext("startScope", [&] { during = openFds() - before; });
    {
        FdLimit limit(before + manager::kFdsReserved + manager::kFdsPerStart);  // the least that passes
        start("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    }
    BOOST_TEST(during <= manager::kFdsPerStart);
    // Awaited: the record's second write may hold its file a moment longer.
    BOOST_TEST(runUntil([&] { return openFds() - before == manager::kFdsPerTask; }),
               openFds() - before << " held, " << manager::kFdsPerTask << " expected");
}

// The start asking for cores is an entry already (starting) but not one of
// the shared tasks its reservation must leave a core for (found by the
// system tier's cpuset test).
BOOST_FIXTURE_TEST_CASE(a_reservation_leaves_a_core_for_the_shared_tasks_but_not_for_itself, Fixture) {
    usable = {0, 1, 2, 3};
    host.version = scope::CgroupVersion::V2;
    open();
    start("c1", "a", taskSpec("/bin/sleep", {"1000"}));
    start("c1", "b", taskSpec("/bin/sleep", {"1000"}, {{"resources", {{"cores", 2}}}}));
    auto c = tryStart("c1", "c", taskSpec("/bin/sleep", {"1000"}, {{"resources", {{"cores", 2}}}}));
    BOOST_REQUIRE(!c);
    BOOST_TEST(c.error().name == "InsufficientCores");
    BOOST_TEST(c.error().message.find("leave no core for 1 running shared task") != std::string::npos,
               c.error().message);
    const auto& d = start("c1", "d", taskSpec("/bin/sleep", {"1000"}, {{"resources", {{"cores", 1}}}}));
    BOOST_TEST(common::formatCpuList(d.cpus) == "2");
    BOOST_TEST(tasks->sharedCpus() == "3");
}

// The synchronous part of a start (the spool's fifos and description, the
// shim's spawn) runs on the start worker, off the loop: until the loop
// takes its result, the start is a starting task that reads answer for,
// nothing has asked systemd yet, and several such starts go on together.
BOOST_FIXTURE_TEST_CASE(a_start_whose_shim_is_still_being_spawned_reads_as_starting, Fixture) {
    config.streamer = true;  // logs through the spool: fifos and a description to make
    open();
    std::vector<std::optional<common::Result<const TaskRecord*>>> out(3);
    for (size_t i = 0; i < out.size(); ++i)
        tasks->start("a1", "t" + std::to_string(i), taskSpec("/bin/sleep", {"1000"}),
                     [&out, i](common::Result<const TaskRecord*> r) { out[i] = std::move(r); });
    // Back from start() with the loop not run since: every start is at
    // most on the worker, and the manager answers from memory.
    BOOST_TEST(systemd.count("startScope") == 0u);
    BOOST_TEST(tasks->list().size() == 3u);
    for (size_t i = 0; i < out.size(); ++i) {
        BOOST_TEST(!out[i].has_value());
        BOOST_TEST(state("a1", "t" + std::to_string(i)) == TaskState::Starting);
    }
    auto again = tryStart("a1", "t0", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(!again);
    BOOST_TEST(again.error().name == "TaskExists");
    BOOST_REQUIRE(runUntil([&] { return out[0] && out[1] && out[2]; }));
    for (size_t i = 0; i < out.size(); ++i) {
        BOOST_REQUIRE_MESSAGE(*out[i], (*out[i] ? "" : out[i]->error().message));
        BOOST_TEST(state("a1", "t" + std::to_string(i)) == TaskState::Running);
    }
    BOOST_TEST(systemd.count("startScope") == 3u);
    BOOST_TEST(filesIn(config.logSpoolDir) == 12u);  // three fifos and a description each
}

// A spawn that fails on the worker leaves nothing: no entry, no spool
// files, no record, and the caller hears why.
BOOST_FIXTURE_TEST_CASE(a_start_whose_shim_cannot_be_spawned_leaves_nothing, Fixture) {
    config.streamer = true;
    config.shimPath = dir.path + "/no-such-shim";
    open();
    auto r = tryStart("a1", "web", taskSpec("/bin/sleep", {"1000"}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().message.find("no-such-shim") != std::string::npos, r.error().message);
    BOOST_TEST(!tasks->get("a1", "web"));
    BOOST_TEST(tasks->list().empty());
    BOOST_TEST(filesIn(config.logSpoolDir) == 0u);
    BOOST_TEST(recordsIn(config.stateDir + "/tasks") == 0u);
    BOOST_TEST(systemd.count("startScope") == 0u);
}

// A start's record goes to disk while systemd makes the scope, not after it
// (the two used to cost one after the other); a start systemd refuses
// answers once that record is gone again.
BOOST_FIXTURE_TEST_CASE(a_starts_record_is_written_while_systemd_makes_the_scope, Fixture) {
    open();
    systemd.hold("startScope");
    std::optional<common::Result<const TaskRecord*>> out;
    tasks->start("a1", "web", taskSpec("/bin/sleep", {"1000"}), [&](auto r) { out = std::move(r); });
    const auto file = config.stateDir + "/tasks/a1-web.scope.json";
    BOOST_REQUIRE(runUntil([&] { return std::filesystem::exists(file); }));
    BOOST_TEST(!out.has_value());
    BOOST_TEST(state("a1", "web") == TaskState::Starting);
    systemd.release();
    BOOST_REQUIRE(runUntil([&] { return out.has_value(); }));
    BOOST_REQUIRE(static_cast<bool>(*out));
    // Not in a scope here (no systemd): the kernel's word on its cgroup,
    // not the slice's, is what the record ends up with.
    const auto cgroup = (**out)->cgroup;
    BOOST_TEST(cgroup.find("nomad.slice") == std::string::npos, cgroup);
    // Known when answered; on disk once its write (not waited for) lands.
    BOOST_TEST(runUntil([&] { return test::slurp(file).find("\"cgroup\":\"" + cgroup + "\"") != std::string::npos; }));

    systemd.hold("startScope");
    systemd.failNext("startScope", common::makeError("SystemdFailed", "start scope: job failed"));
    std::optional<common::Result<const TaskRecord*>> failed;
    tasks->start("a1", "api", taskSpec("/bin/sleep", {"1000"}), [&](auto r) { failed = std::move(r); });
    const auto apiFile = config.stateDir + "/tasks/a1-api.scope.json";
    BOOST_REQUIRE(runUntil([&] { return std::filesystem::exists(apiFile); }));
    systemd.release();
    BOOST_REQUIRE(runUntil([&] { return failed.has_value(); }));
    BOOST_TEST(!*failed);
    BOOST_TEST(!std::filesystem::exists(apiFile));
    BOOST_TEST(!tasks->get("a1", "api"));
}
