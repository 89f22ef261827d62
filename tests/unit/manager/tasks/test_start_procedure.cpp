#define BOOST_TEST_MODULE start_procedure
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error_names.hpp"
#include "common/event_loop.hpp"
#include "common/files.hpp"
#include "common/unique_fd.hpp"
#include "common/worker.hpp"
#include "manager/tasks/start_procedure.hpp"
#include "support/fake_systemd_client.hpp"
#include "support/temp_dir.hpp"
#include "wire/spool.hpp"

// One start against a fake systemd and the real shim, as its own part:
// every way it can fail runs the one undo list over what it holds, and
// the start ends only after (nothing of it is left when it says so).

using namespace taskscope;
using namespace std::chrono_literals;
using manager::StartStep;
using test::FakeSystemdClient;

namespace taskscope::manager {
std::ostream& operator<<(std::ostream& out, StartStep s) {
    return out << toString(s);
}
}  // namespace taskscope::manager

namespace {

std::string me() {
    const auto* pw = ::getpwuid(::getuid());
    return pw ? pw->pw_name : "root";
}

size_t filesIn(const std::string& dir) {
    size_t n = 0;
    std::error_code ec;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir, ec)) ++n;
    return n;
}

bool processGone(pid_t pid) {
    if (::kill(pid, 0) < 0) return errno == ESRCH;
    auto stat = test::slurp("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

struct Heard final : manager::StartEvents {
    std::vector<StartStep> steps;
    std::function<void(StartStep)> onStep;  ///< run as each step is reached
    std::optional<common::Result<void>> ended;
    task::TaskRecord last;
    void startProgressed(const task::TaskRecord& draft, StartStep step) override {
        steps.push_back(step);
        last = draft;
        if (onStep) onStep(step);
    }
    void startEnded(const task::TaskRecord& draft, common::Result<void> outcome) override {
        last = draft;
        ended = std::move(outcome);
    }
    int poolGrew = 0;
    void sharedPoolGrew() override { ++poolGrew; }
    bool reached(StartStep s) const {
        for (auto x : steps)
            if (x == s) return true;
        return false;
    }
};

struct Fixture {
    test::TempDir dir;
    common::EventLoop loop;
    FakeSystemdClient systemd{&loop};
    manager::Config config;
    std::unique_ptr<manager::StateStore> store;
    std::unique_ptr<manager::LogSpool> spool;
    std::unique_ptr<manager::RecordWriter> records;
    std::unique_ptr<common::Worker> startWorker, cgroupWorker;
    std::unique_ptr<manager::CpuPool> cpus;
    std::function<common::Result<void>(const std::string&, const std::string&, spec::TaskSpec&)> hook;
    std::function<common::Result<std::string>(const std::string&)> netns;
    Heard heard;
    std::unique_ptr<manager::StartProcedure> start;
    std::function<void()> beforeBegin;  ///< run once the workers exist
    std::string allocId = "a1";         ///< of the task run() starts

    Fixture() {
        const char* shim = std::getenv("TASKSCOPE_SHIM_PATH");
        BOOST_REQUIRE_MESSAGE(shim, "TASKSCOPE_SHIM_PATH must name the built shim");
        config.shimPath = shim;
        config.stateDir = dir.path + "/state";
        config.logSpoolDir = dir.path + "/spool";
    }
    ~Fixture() {
        start.reset();
        for (const auto& [unit, s] : systemd.scopes)
            for (auto pid : s.pids) ::kill(static_cast<pid_t>(pid), SIGKILL);
        for (auto pid : systemd.lastStartPids) ::kill(static_cast<pid_t>(pid), SIGKILL);
        std::error_code ec;
        for (const auto& f : std::filesystem::directory_iterator(config.logSpoolDir, ec))
            if (f.path().extension() == ".release") common::pokeFifo(f.path());
        while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
        }
    }

    /// Runs one start of <allocId>/web with `spec` to its end.
    common::Result<void> run(const std::string& specJson, std::set<unsigned> usable = {}, bool unified = false) {
        store = std::make_unique<manager::StateStore>(config.stateDir);
        BOOST_REQUIRE(store->prepare());
        spool = std::make_unique<manager::LogSpool>(config.logSpoolDir);
        BOOST_REQUIRE(spool->prepareDir());
        records = std::make_unique<manager::RecordWriter>(*store, loop);
        startWorker = std::make_unique<common::Worker>(loop);
        cgroupWorker = std::make_unique<common::Worker>(loop);
        cpus = std::make_unique<manager::CpuPool>(usable, std::set<unsigned>{}, unified);
        task::TaskRecord draft;
        draft.allocId = allocId;
        draft.name = "web";
        draft.unit = allocId + "-web.scope";
        draft.specText = specJson;
        std::optional<common::Error> refused;
        if (auto s = spec::parseTaskSpec(specJson))
            draft.spec = *s;
        else
            refused = s.error();
        manager::StartContext ctx{config, *spool,  *records, systemd, loop,    *startWorker, *cgroupWorker,
                                  *cpus,  nullptr, hook,     netns,   nullptr, nullptr, {}};
        ctx.lastOfAlloc = [](const std::string&, const std::string&) { return true; };
        start = std::make_unique<manager::StartProcedure>(std::move(ctx), draft, refused, heard);
        if (beforeBegin) beforeBegin();
        start->begin();
        const auto deadline = common::EventLoop::Clock::now() + 10s;
        while (!heard.ended && common::EventLoop::Clock::now() < deadline) {
            loop.addTimer(common::EventLoop::Clock::now() + 10ms, [this] { loop.quit(); });
            loop.run();
        }
        BOOST_REQUIRE_MESSAGE(heard.ended.has_value(), "the start ended");
        return *heard.ended;
    }

    std::string spec(const std::string& command, nlohmann::json extra = nlohmann::json::object()) {
        nlohmann::json j = {{"command", command}, {"user", me()}};
        for (const auto& [k, v] : extra.items()) j[k] = v;
        return j.dump();
    }

    /// Holds the start worker with a job of its own until `held` is false
    /// (a spawn the kernel holds under a fork bomb).
    void holdWorker(std::shared_ptr<std::atomic<bool>> held) {
        startWorker->submit([held]() -> std::function<void()> {
            while (*held) std::this_thread::sleep_for(10ms);
            return [] {};
        });
    }

    /// Nothing of the start is left: record, exit record or mark, process
    /// spec, spool entry; its shim has exited.
    void leftNothing() {
        BOOST_TEST(filesIn(config.stateDir + "/tasks") == 0u);
        BOOST_TEST(filesIn(config.stateDir + "/exits") == 0u);
        BOOST_TEST(filesIn(config.stateDir + "/process") == 0u);
        BOOST_TEST(filesIn(config.logSpoolDir) == 0u);
        if (heard.last.shimPid > 0) BOOST_TEST(processGone(heard.last.shimPid));
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_start_reaches_every_step_and_ends_with_its_record_on_disk, Fixture) {
    auto r = run(spec("/bin/sleep", {{"args", {"1000"}}}));
    BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    const std::vector<StartStep> order = {StartStep::Placed,   StartStep::Resolved, StartStep::Preparing, StartStep::Spawned,
                                          StartStep::Launched, StartStep::Recorded,  StartStep::ScopeMade,
                                          StartStep::Released};
    std::vector<StartStep> seen;
    for (auto s : heard.steps)
        if (seen.empty() || seen.back() != s) seen.push_back(s);
    BOOST_TEST(seen == order, boost::test_tools::per_element());
    BOOST_TEST(start->step() == StartStep::Running);
    BOOST_TEST((heard.last.state == task::TaskState::Running));
    BOOST_TEST(heard.last.pid > 0);
    // The cgroup as the kernel has the task (no systemd here: not a slice's).
    BOOST_TEST(!heard.last.cgroup.empty());
    // Its cgroup's write is not waited for: on disk a moment later.
    const auto file = config.stateDir + "/tasks/a1-web.scope.json";
    const auto deadline = common::EventLoop::Clock::now() + 5s;
    while (test::slurp(file).find("\"cgroup\":\"" + heard.last.cgroup + "\"") == std::string::npos &&
           common::EventLoop::Clock::now() < deadline) {
        loop.addTimer(common::EventLoop::Clock::now() + 10ms, [this] { loop.quit(); });
        loop.run();
    }
    const auto onDisk = test::slurp(file);
    BOOST_TEST(onDisk.find("\"cgroup\":\"" + heard.last.cgroup + "\"") != std::string::npos, onDisk);
    BOOST_TEST(onDisk.find("\"state\":\"running\"") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(a_refused_spec_ends_at_admission_with_nothing_made, Fixture) {
    auto r = run(R"({"command":"/bin/true","bogus":1})");
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "InvalidSpec");
    BOOST_TEST(heard.steps.empty());
    BOOST_TEST(systemd.calls.empty());
    leftNothing();
}

BOOST_FIXTURE_TEST_CASE(a_binary_that_is_not_there_ends_before_anything_is_made, Fixture) {
    auto r = run(spec("/no/such/binary"));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "NoSuchBinary");
    BOOST_TEST(systemd.calls.empty());
    leftNothing();
}

// The start owns what it takes (issue 48): a failure after its cores were
// reserved and its dirs made gives both back before the caller hears.
BOOST_FIXTURE_TEST_CASE(a_failed_start_gives_its_cores_back, Fixture) {
    auto r = run(spec("/no/such/binary", {{"resources", {{"cores", 2}}}}), {0, 1, 2, 3}, true);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "NoSuchBinary");
    BOOST_TEST(heard.reached(StartStep::Placed));
    BOOST_TEST(heard.last.reservedCores);
    BOOST_TEST(cpus->sharedText() == "0-3");
    BOOST_TEST(heard.poolGrew == 1);
    leftNothing();
}

BOOST_FIXTURE_TEST_CASE(a_failed_isolated_start_removes_the_dirs_it_made, Fixture) {
    nlohmann::json j = {{"command", "/bin/true"}, {"user", "no-such-user-xyz"}, {"isolation", nlohmann::json::object()}};
    auto r = run(j.dump());
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "UnknownUser", r.error().message);
    BOOST_TEST(heard.reached(StartStep::Preparing));
    // prepareTaskDirs made the task's root (the user is looked up in it).
    BOOST_TEST(!std::filesystem::exists(config.stateDir + "/tasks-root/a1/tasks/web"));
    BOOST_TEST(!std::filesystem::exists(config.stateDir + "/tasks-root/a1"));
    leftNothing();
}

BOOST_FIXTURE_TEST_CASE(a_hook_that_refuses_ends_the_start, Fixture) {
    hook = [](const std::string&, const std::string&, spec::TaskSpec&) -> common::Result<void> {
        return common::makeError("PluginNameInUse", "plugin csi/x is already served");
    };
    auto r = run(spec("/bin/true"));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "PluginNameInUse");
    leftNothing();
}

BOOST_FIXTURE_TEST_CASE(cores_that_cannot_be_had_end_the_start, Fixture) {
    auto r = run(spec("/bin/true", {{"resources", {{"cores", 8}}}}), {0, 1, 2, 3}, true);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "InsufficientCores");
    BOOST_TEST(cpus->sharedText() == "0-3");
    leftNothing();
}

BOOST_FIXTURE_TEST_CASE(a_network_that_is_not_there_ends_the_start, Fixture) {
    auto r = run(spec("/bin/true", {{"network_namespace", "alloc"}}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "NoSuchNetwork");
    leftNothing();
}

BOOST_FIXTURE_TEST_CASE(a_shim_that_cannot_be_spawned_leaves_no_spool_and_no_process_spec, Fixture) {
    config.shimPath = dir.path + "/no-such-shim";
    auto r = run(spec("/bin/true"));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().message.find("no-such-shim") != std::string::npos, r.error().message);
    BOOST_TEST(heard.reached(StartStep::Preparing));
    BOOST_TEST(!heard.reached(StartStep::Spawned));
    leftNothing();
}

// The shim fails before it reports a pid (here a stand-in that says what
// the shim says when it cannot hold the task's log fifos): the undo list
// takes the shim (waited for), its spool entry and its process spec.
BOOST_FIXTURE_TEST_CASE(a_shim_that_reports_no_pid_is_undone, Fixture) {
    const auto fake = dir.path + "/failing-shim";
    {
        std::ofstream out(fake);
        out << "#!/bin/sh\necho 'error 2 hold-logs' >&3\n";
    }
    ::chmod(fake.c_str(), 0755);
    config.shimPath = fake;
    auto r = run(spec("/bin/true"));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().message.find("hold-logs") != std::string::npos, r.error().message);
    BOOST_TEST(heard.reached(StartStep::Spawned));
    BOOST_TEST(!heard.reached(StartStep::Launched));
    BOOST_TEST(systemd.count("startScope") == 0u);
    leftNothing();
}

// systemd refuses the scope after the record went to disk: the shim leaves
// without running the task (and is waited for), then the record goes; the
// scope was never made, so nothing is stopped.
BOOST_FIXTURE_TEST_CASE(a_scope_systemd_refuses_is_undone_record_and_all, Fixture) {
    systemd.failNext("startScope", common::makeError("SystemdFailed", "start scope: job failed"));
    auto r = run(spec("/bin/sleep", {{"args", {"1000"}}}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "SystemdFailed");
    BOOST_TEST(heard.reached(StartStep::Recorded));
    BOOST_TEST(!heard.reached(StartStep::ScopeMade));
    BOOST_TEST(systemd.count("stopUnit") == 0u);
    // Waited for: gone before the start ended, its aborted mark removed after.
    BOOST_TEST(processGone(heard.last.shimPid));
    BOOST_TEST(processGone(heard.last.pid));
    leftNothing();
}

// The command cannot run once the scope exists: the shim records the failed
// exec and exits (waited for, off the loop), the scope is stopped, the
// record removed.
BOOST_FIXTURE_TEST_CASE(a_command_that_cannot_run_is_undone_scope_and_all, Fixture) {
    const auto bin = dir.path + "/vanishing";
    std::filesystem::copy_file("/bin/true", bin);
    ::chmod(bin.c_str(), 0755);
    systemd.duringNext("startScope", [bin] { std::filesystem::remove(bin); });
    auto r = run(spec(bin));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "ExecFailed");
    BOOST_TEST(heard.reached(StartStep::Released));
    BOOST_TEST(systemd.count("stopUnit", "a1-web.scope") == 1u);
    leftNothing();
}

// A step of the undo list that fails is the caller's to know.
BOOST_FIXTURE_TEST_CASE(a_scope_that_cannot_be_stopped_is_said_in_the_error, Fixture) {
    const auto bin = dir.path + "/vanishing";
    std::filesystem::copy_file("/bin/true", bin);
    ::chmod(bin.c_str(), 0755);
    systemd.duringNext("startScope", [bin] { std::filesystem::remove(bin); });
    systemd.failNext("stopUnit", common::makeError("SystemdFailed", "stop a1-web.scope: access denied"));
    auto r = run(spec(bin));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "ExecFailed");
    BOOST_TEST(r.error().message.find("its scope was not stopped") != std::string::npos, r.error().message);
    leftNothing();
}

// The undo list is one table: each entry is held from the step that
// acquires it, and a start ends in failure only after all it held is gone.
BOOST_FIXTURE_TEST_CASE(a_start_destroyed_midway_answers_nothing_later, Fixture) {
    systemd.hold("startScope");
    store = std::make_unique<manager::StateStore>(config.stateDir);
    BOOST_REQUIRE(store->prepare());
    spool = std::make_unique<manager::LogSpool>(config.logSpoolDir);
    BOOST_REQUIRE(spool->prepareDir());
    records = std::make_unique<manager::RecordWriter>(*store, loop);
    startWorker = std::make_unique<common::Worker>(loop);
    cgroupWorker = std::make_unique<common::Worker>(loop);
    cpus = std::make_unique<manager::CpuPool>(std::set<unsigned>{}, std::set<unsigned>{}, false);
    task::TaskRecord draft;
    draft.allocId = "a1";
    draft.name = "web";
    draft.unit = "a1-web.scope";
    draft.spec = *spec::parseTaskSpec(spec("/bin/sleep", {{"args", {"1000"}}}));
    manager::StartContext ctx{config, *spool,  *records, systemd, loop,    *startWorker, *cgroupWorker,
                              *cpus,  nullptr, hook,     netns,   nullptr, nullptr, {}};
    start = std::make_unique<manager::StartProcedure>(std::move(ctx), draft, std::nullopt, heard);
    start->begin();
    const auto deadline = common::EventLoop::Clock::now() + 10s;
    while (systemd.count("startScope") == 0 && common::EventLoop::Clock::now() < deadline) {
        loop.addTimer(common::EventLoop::Clock::now() + 10ms, [this] { loop.quit(); });
        loop.run();
    }
    start.reset();
    systemd.release();
    loop.addTimer(common::EventLoop::Clock::now() + 50ms, [this] { loop.quit(); });
    loop.run();
    BOOST_TEST(!heard.ended.has_value());
}

// systemd does not answer within start_timeout_ms (busy under a fork bomb,
// issue 48): the start fails Overloaded, after its held shim has left
// without running the task and its record is gone; systemd's late answer
// changes nothing.
BOOST_FIXTURE_TEST_CASE(a_start_systemd_leaves_unanswered_fails_overloaded_with_nothing_run, Fixture) {
    config.startTimeoutMs = 300;
    systemd.hold("startScope");
    auto r = run(spec("/bin/sleep", {{"args", {"1000"}}}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "Overloaded");
    BOOST_TEST(r.error().message.find("start_timeout_ms") != std::string::npos, r.error().message);
    BOOST_TEST(heard.reached(StartStep::Recorded));
    BOOST_TEST(!heard.reached(StartStep::Released));
    BOOST_TEST(processGone(heard.last.shimPid));
    BOOST_TEST(processGone(heard.last.pid));
    leftNothing();
    systemd.release();
    loop.addTimer(common::EventLoop::Clock::now() + 50ms, [this] { loop.quit(); });
    loop.run();
    BOOST_TEST(!heard.reached(StartStep::Released));
    BOOST_TEST(heard.ended.has_value());
    BOOST_TEST(!*heard.ended);
}

// A start past its worker turn when systemd stops answering, while the
// worker is held by another job (a spawn the kernel holds under a fork
// bomb): it fails at its deadline without waiting for the worker to remove
// its dirs, which goes once the worker is free.
BOOST_FIXTURE_TEST_CASE(an_overloaded_start_is_answered_without_waiting_for_the_worker, Fixture) {
    config.startTimeoutMs = 300;
    systemd.hold("startScope");
    auto held = std::make_shared<std::atomic<bool>>(true);
    // Frees the worker however the test ends (before the fixture joins it).
    std::shared_ptr<void> freed(nullptr, [held](void*) { *held = false; });
    auto queued = std::make_shared<std::atomic<bool>>(false);
    heard.onStep = [this, held, queued](StartStep step) {
        if (step != StartStep::Recorded || *queued) return;
        *queued = true;
        holdWorker(held);
    };
    const auto t0 = common::EventLoop::Clock::now();
    auto r = run(spec("/bin/sleep", {{"args", {"1000"}}}));
    const auto took = common::EventLoop::Clock::now() - t0;
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "Overloaded");
    BOOST_TEST(*queued);
    BOOST_TEST(took < 3s);
    BOOST_TEST(*held);  // answered while the worker was still held
    BOOST_TEST(processGone(heard.last.shimPid));
    BOOST_TEST(processGone(heard.last.pid));
    *held = false;
    loop.addTimer(common::EventLoop::Clock::now() + 200ms, [this] { loop.quit(); });
    loop.run();
    leftNothing();
    systemd.release();
}

// A start queued on the start worker behind a job the kernel holds (a
// spawn waiting for the cgroup lock under a fork bomb) fails at its
// deadline, not when the worker frees: its turn is skipped, nothing made.
BOOST_FIXTURE_TEST_CASE(a_start_stuck_behind_the_worker_fails_at_its_deadline, Fixture) {
    config.startTimeoutMs = 300;
    auto held = std::make_shared<std::atomic<bool>>(true);
    beforeBegin = [this, held] {
        holdWorker(held);
    };
    const auto t0 = common::EventLoop::Clock::now();
    auto r = run(spec("/bin/sleep", {{"args", {"1000"}}}));
    const auto took = common::EventLoop::Clock::now() - t0;
    *held = false;
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "Overloaded");
    BOOST_TEST(heard.reached(StartStep::Preparing));
    BOOST_TEST(!heard.reached(StartStep::Spawned));
    BOOST_TEST(took < 3s);
    // The worker's turn, once it comes, makes nothing.
    loop.addTimer(common::EventLoop::Clock::now() + 100ms, [this] { loop.quit(); });
    loop.run();
    BOOST_TEST(systemd.calls.empty());
    leftNothing();
}

// The test fault point (config.hpp's faultPoints): a start held at any step
// before its release fails at its deadline with Overloaded, naming the
// step, and its undo leaves nothing of what that step had made. The system
// tier holds starts the same way under a real systemd.
BOOST_AUTO_TEST_CASE(a_start_held_at_any_step_fails_at_its_deadline_and_leaves_nothing) {
    for (const auto step : {StartStep::Placed, StartStep::Resolved, StartStep::Preparing, StartStep::Spawned,
                            StartStep::Launched, StartStep::Recorded, StartStep::ScopeMade}) {
        Fixture f;
        std::string name = manager::toString(step);
        std::replace(name.begin(), name.end(), ' ', '-');
        BOOST_TEST_CONTEXT("held at " << name) {
            f.config.faultPoints = true;
            f.config.startTimeoutMs = 500;
            f.allocId = "fault-hold-" + name + "-1";
            auto r = f.run(f.spec("/bin/sleep", {{"args", {"1000"}}}));
            BOOST_REQUIRE(!r);
            BOOST_TEST(r.error().name == common::errors::kOverloaded);
            // Held at "recorded", its scope is still made (only its release
            // waits): the step it reached is then "scope made".
            if (step != StartStep::Recorded)
                BOOST_TEST(r.error().message.find("it reached \"" + std::string(manager::toString(step)) + "\"") !=
                           std::string::npos);
            BOOST_TEST(!f.heard.reached(StartStep::Released));
            if (step >= StartStep::ScopeMade) BOOST_TEST(f.systemd.count("stopUnit") == 1u);
            // A shim told to leave before the record was written marks that
            // it left (the next start of the name removes the mark:
            // suspectLeftovers); nothing else may be there.
            if (step == StartStep::Spawned || step == StartStep::Launched)
                std::filesystem::remove(f.store->abortedMark(f.allocId + "-web.scope"));
            f.leftNothing();
        }
    }
    // Off (the default), the same name starts as any other.
    Fixture f;
    f.allocId = "fault-hold-placed-1";
    BOOST_TEST(f.run(f.spec("/bin/sleep", {{"args", {"1000"}}})).ok());
}

// --- issue 59: a copy of the task's output to the journal ---------------

namespace {

/// A listening-less socket at `path`: what journal_socket has to name.
common::UniqueFd socketAt(const std::string& path) {
    common::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, sizeof a.sun_path - 1);
    BOOST_REQUIRE(fd && ::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    return fd;
}

/// The shim's command line, its words joined by spaces.
std::string cmdlineOf(pid_t pid) {
    auto text = test::slurp("/proc/" + std::to_string(pid) + "/cmdline");
    std::replace(text.begin(), text.end(), '\0', ' ');
    return text;
}

}  // namespace

// The node's default, with journald's socket there: the description says
// journal and, before the task's first instruction, its pid; the shim
// keeps the ended task unreaped until the release.
BOOST_FIXTURE_TEST_CASE(a_journal_start_writes_the_task_pid_and_keeps_the_task_unreaped, Fixture) {
    config.logJournal = true;
    config.journalSocket = dir.path + "/journal.socket";
    auto journald = socketAt(config.journalSocket);
    auto r = run(spec("/bin/sleep", {{"args", {"1000"}}}));
    BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    auto d = wire::parseSpoolDescription(test::slurp(spool->description("a1-web.scope")));
    BOOST_REQUIRE(d);
    BOOST_TEST(d->journal);
    BOOST_TEST(d->taskPid == heard.last.pid);
    BOOST_TEST(cmdlineOf(heard.last.shimPid).find(" --release-fifo ") != std::string::npos);
    BOOST_TEST(cmdlineOf(heard.last.shimPid).find(" --keep-task-zombie ") != std::string::npos);
}

// Off (the default, or the spec's false over a node's true): nothing of it
// in the description or on the shim's command line.
BOOST_FIXTURE_TEST_CASE(a_start_without_the_journal_writes_no_pid, Fixture) {
    config.logJournal = true;
    config.journalSocket = dir.path + "/no-journal";  // not needed: not asked
    auto r = run(spec("/bin/sleep", {{"args", {"1000"}}, {"log_journal", false}}));
    BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    auto d = wire::parseSpoolDescription(test::slurp(spool->description("a1-web.scope")));
    BOOST_REQUIRE(d);
    BOOST_TEST(!d->journal);
    BOOST_TEST(d->taskPid == 0);
    BOOST_TEST(cmdlineOf(heard.last.shimPid).find("--keep-task-zombie") == std::string::npos);
}

// A task with Nomad's log fifos (stdout_path/stderr_path) and the journal:
// the shim gets the spool's fifos and holds Nomad's paths (logmon reads
// until its last writer goes), and the description tells the streamer
// where to forward, and as whose (the task's uid may own the paths).
BOOST_FIXTURE_TEST_CASE(a_journal_start_with_nomads_fifos_forwards_through_the_streamer, Fixture) {
    config.journalSocket = dir.path + "/journal.socket";
    auto journald = socketAt(config.journalSocket);
    const auto out = dir.path + "/.web.stdout.fifo", err = dir.path + "/.web.stderr.fifo";
    BOOST_REQUIRE(::mkfifo(out.c_str(), 0600) == 0 && ::mkfifo(err.c_str(), 0600) == 0);
    auto r = run(spec("/bin/sleep", {{"args", {"1000"}}, {"stdout_path", out}, {"stderr_path", err},
                                     {"log_journal", true}}));
    BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    auto d = wire::parseSpoolDescription(test::slurp(spool->description("a1-web.scope")));
    BOOST_REQUIRE(d);
    BOOST_TEST(d->journal);
    BOOST_REQUIRE(d->forward.has_value());
    BOOST_TEST(d->forward->stdoutPath == out);
    BOOST_TEST(d->forward->stderrPath == err);
    BOOST_TEST(d->forward->uid == static_cast<int64_t>(::getuid()));
    const auto cmdline = cmdlineOf(heard.last.shimPid);
    BOOST_TEST(cmdline.find(" --stdout " + spool->stdoutFifo("a1-web.scope") + " ") != std::string::npos, cmdline);
    BOOST_TEST(cmdline.find(" --forward-stdout " + out + " ") != std::string::npos, cmdline);
    BOOST_TEST(cmdline.find(" --forward-stderr " + err + " ") != std::string::npos, cmdline);
}

// Asked for on a node whose manager hands output to no streamer: refused
// by name rather than silently not copied.
BOOST_FIXTURE_TEST_CASE(a_journal_start_without_the_streamer_fails_by_name, Fixture) {
    config.streamer = false;
    auto r = run(spec("/bin/true", {{"log_journal", true}}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == common::errors::kJournalUnavailable);
    BOOST_TEST(r.error().message.find("\"streamer\": false") != std::string::npos, r.error().message);
    leftNothing();
}

// Asked for, with no journald to take it: refused by name, saying what to
// do, before anything is spawned; nothing is left.
BOOST_FIXTURE_TEST_CASE(a_journal_start_without_journald_fails_by_name, Fixture) {
    config.journalSocket = dir.path + "/no-journal";
    {
        std::ofstream notASocket(config.journalSocket);
    }
    auto r = run(spec("/bin/true", {{"log_journal", true}}));
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == common::errors::kJournalUnavailable);
    BOOST_TEST(r.error().message.find(config.journalSocket) != std::string::npos, r.error().message);
    BOOST_TEST(r.error().message.find("systemd-journald") != std::string::npos, r.error().message);
    BOOST_TEST(r.error().message.find("log_journal off") != std::string::npos, r.error().message);
    BOOST_TEST(!heard.reached(StartStep::Spawned));
    ::unlink(config.journalSocket.c_str());
    leftNothing();
}
