#define BOOST_TEST_MODULE stream_exec_service
#include <boost/test/unit_test.hpp>

// ExecService with the manager and systemd faked and real processes: the
// test process plays the task (its own namespaces, so none is joined), its
// children are the exec'd commands. No privileges needed.

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/files.hpp"
#include "stream/exec/exec_service.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::stream::exec;
using taskscope::common::Error;
using taskscope::common::EventLoop;
using taskscope::common::makeError;
using taskscope::common::Result;
using namespace std::chrono_literals;

namespace {

struct FakeDirectory : TaskDirectory {
    std::string json;
    std::optional<Error> error;
    bool hold = false;
    std::vector<std::function<void(Result<taskscope::wire::TaskInfo>)>> held;

    void getTask(const std::string&, const std::string&,
                 std::function<void(Result<taskscope::wire::TaskInfo>)> done) override {
        if (hold) return held.push_back(std::move(done));
        if (error) return done(*error);
        done(taskscope::wire::parseTaskJson(json));
    }
};

struct FakeAttacher : ScopeAttacher {
    std::vector<pid_t> attached;
    std::optional<Error> error;
    bool hold = false;
    std::vector<std::function<void(Result<void>)>> held;

    void attach(const std::string&, pid_t pid, std::function<void(Result<void>)> done) override {
        attached.push_back(pid);
        if (hold) return held.push_back(std::move(done));
        if (error) return done(*error);
        done({});
    }
};

struct Events : ExecEvents {
    std::vector<std::pair<uint64_t, ExecResult>> exited;
    void execExited(uint64_t id, const std::string&, const std::string&, const ExecResult& r) override {
        exited.emplace_back(id, r);
    }
    int changes = 0;
    void sessionsChanged() override { ++changes; }
};

// The cgroup path of this process, from the last line of /proc/self/cgroup.
std::string ownCgroup() {
    auto text = taskscope::common::readFile("/proc/self/cgroup");
    BOOST_REQUIRE(text.ok());
    std::string last;
    size_t pos = 0;
    while (pos < text->size()) {
        const auto nl = text->find('\n', pos);
        const auto line = text->substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        if (!line.empty()) last = line;
        if (nl == std::string::npos) break;
        pos = nl + 1;
    }
    return last.substr(last.find(':', last.find(':') + 1) + 1);
}

struct Fixture {
    taskscope::test::TempDir tmp;
    EventLoop loop;
    FakeDirectory directory;
    FakeAttacher attacher;
    Events events;
    ExecServiceOptions options;
    std::unique_ptr<ExecService> service;

    Fixture() {
        nlohmann::json spec = {{"command", "/bin/sleep"},
                               {"user", ::getpwuid(::getuid())->pw_name},
                               {"cwd", tmp.path},
                               {"env", {{"FROM_TASK", "yes"}}}};
        directory.json = nlohmann::json{
            {"state", "running"},
            {"pid", ::getpid()},
            {"unit", "a1-web.scope"},
            {"cgroup", ownCgroup()},
            {"process_spec", tmp.path + "/process-spec"},
            {"spec", spec}}.dump();
        writeProcessSpec(tmp.path);
        options.hangupGrace = 200ms;
        options.shimPath = TASKSCOPE_TEST_SHIM;
        make();
    }

    // The task's process spec as the manager saves it: our own identity.
    void writeProcessSpec(const std::string& cwd) {
        std::string text;
        for (const auto& w : {std::string("--uid"), std::to_string(::getuid()), std::string("--gid"),
                              std::to_string(::getgid()), std::string("--cwd"), cwd})
            text += w + '\0';
        BOOST_REQUIRE(taskscope::common::writeFileAtomic(tmp.path + "/process-spec", text).ok());
    }

    void make() {
        service = std::make_unique<ExecService>(loop, directory, attacher, options);
        service->attach(events);
    }

    // Runs the loop until done() holds (false after `limit`).
    bool runUntil(const std::function<bool()>& done, std::chrono::milliseconds limit = 20s) {
        const auto end = EventLoop::Clock::now() + limit;
        std::function<void()> tick = [&] {
            if (done() || EventLoop::Clock::now() >= end)
                loop.quit();
            else
                loop.addTimer(EventLoop::Clock::now() + 5ms, tick);
        };
        loop.addTimer(EventLoop::Clock::now(), tick);
        loop.run();
        return done();
    }

    ExecRequest request(std::vector<std::string> command, bool tty = false) {
        ExecRequest r;
        r.allocId = "a1";
        r.task = "web";
        r.command = std::move(command);
        r.tty = tty;
        r.rows = 24;
        r.cols = 80;
        r.owner = ":1.42";
        return r;
    }

    Result<OnceResult> once(std::vector<std::string> command, uint32_t timeoutMs = 10000, uint32_t cap = 4096,
                            std::map<std::string, std::string> env = {}) {
        std::optional<Result<OnceResult>> out;
        auto req = request(std::move(command));
        req.env = std::move(env);
        service->once(std::move(req), timeoutMs, cap, [&](Result<OnceResult> r) { out.emplace(std::move(r)); });
        BOOST_REQUIRE(runUntil([&] { return out.has_value(); }));
        return std::move(*out);
    }

    Result<ExecStarted> start(ExecRequest req) {
        std::optional<Result<ExecStarted>> out;
        service->start(std::move(req), [&](Result<ExecStarted> r) { out.emplace(std::move(r)); });
        BOOST_REQUIRE(runUntil([&] { return out.has_value(); }));
        return std::move(*out);
    }

    Result<ExecResult> wait(uint64_t id) {
        std::optional<Result<ExecResult>> out;
        service->wait(id, [&](Result<ExecResult> r) { out.emplace(std::move(r)); });
        BOOST_REQUIRE(runUntil([&] { return out.has_value(); }));
        return std::move(*out);
    }
};

template <class T>
std::string why(const Result<T>& r) {
    return r.ok() ? std::string() : r.error().name + ": " + r.error().message;
}

std::string text(const OnceResult& r) {
    return std::string(r.output.begin(), r.output.end());
}

// Reads fd until `want` appears in what was read, or end of file / EIO.
std::string readUntil(int fd, const std::string& want) {
    std::string got;
    char buf[4096];
    while (got.find(want) == std::string::npos) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 10000) <= 0) break;
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
    }
    return got;
}

bool goneOrZombie(pid_t pid) {
    auto stat = taskscope::common::readFile("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    const auto close = stat->rfind(')');
    return close != std::string::npos && stat->substr(close + 2, 1) == "Z";
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(once_runs_with_the_tasks_env_and_cwd_and_captures_both_streams, Fixture) {
    auto r =
        once({"sh", "-c", "echo out; echo err >&2; echo $FROM_TASK $EXTRA; pwd"}, 10000, 4096, {{"EXTRA", "extra"}});
    BOOST_REQUIRE_MESSAGE(r.ok(), why(r));
    BOOST_TEST(r->result.exitCode == 0);
    BOOST_TEST(text(*r) == "out\nerr\nyes extra\n" + std::filesystem::canonical(tmp.path).string() + "\n");
    BOOST_TEST(!r->truncated);
    BOOST_TEST(attacher.attached.size() == 1u);
    BOOST_TEST(service->activeSessions() == 0u);
}

BOOST_FIXTURE_TEST_CASE(once_passes_exit_codes_and_signals_through, Fixture) {
    auto seven = once({"sh", "-c", "exit 7"});
    BOOST_REQUIRE(seven.ok());
    BOOST_TEST(seven->result.exitCode == 7);
    BOOST_TEST(seven->result.signal == 0);
    auto killed = once({"sh", "-c", "kill -TERM $$"});
    BOOST_REQUIRE(killed.ok());
    BOOST_TEST(killed->result.exitCode == 143);
    BOOST_TEST(killed->result.signal == 15);
}

BOOST_FIXTURE_TEST_CASE(once_caps_output_and_never_blocks_the_command, Fixture) {
    auto r = once({"head", "-c", "3000000", "/dev/zero"}, 20000, 10);
    BOOST_REQUIRE(r.ok());
    BOOST_TEST(r->result.exitCode == 0);
    BOOST_TEST(r->output.size() == 10u);
    BOOST_TEST(r->truncated);
    auto none = once({"echo", "x"}, 10000, 0);
    BOOST_REQUIRE(none.ok());
    BOOST_TEST(none->output.empty());
    BOOST_TEST(none->truncated);
}

BOOST_FIXTURE_TEST_CASE(once_past_its_deadline_kills_the_group_and_says_timeout, Fixture) {
    const auto pidFile = tmp.path + "/sleeper";
    const auto t0 = EventLoop::Clock::now();
    auto r = once({"sh", "-c", "sleep 30 & echo $! > " + pidFile + "; wait"}, 500);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "Timeout");
    BOOST_TEST((EventLoop::Clock::now() - t0) < 10s);
    auto pid = taskscope::common::readFile(pidFile);
    BOOST_REQUIRE(pid.ok());
    const pid_t sleeper = std::stoi(*pid);
    BOOST_TEST(runUntil([&] { return goneOrZombie(sleeper); }, 5s));
    BOOST_TEST(service->activeSessions() == 0u);
}

BOOST_FIXTURE_TEST_CASE(pipes_session_relays_stdin_to_stdout, Fixture) {
    auto s = start(request({"cat"}));
    BOOST_REQUIRE_MESSAGE(s.ok(), why(s));
    BOOST_REQUIRE(s->fds.size() == 3u);
    BOOST_REQUIRE(::write(s->fds[0].get(), "hello", 5) == 5);
    s->fds[0].reset();
    BOOST_TEST(readUntil(s->fds[1].get(), "\n") == "hello");
    auto w = wait(s->session);
    BOOST_REQUIRE(w.ok());
    BOOST_TEST(w->exitCode == 0);
}

BOOST_FIXTURE_TEST_CASE(tty_session_has_a_terminal_of_the_given_size_and_resizes, Fixture) {
    auto s = start(request({"sh", "-c", "tty; stty size; read x; stty size"}, true));
    BOOST_REQUIRE_MESSAGE(s.ok(), why(s));
    BOOST_REQUIRE(s->fds.size() == 1u);
    const int master = s->fds[0].get();
    const auto first = readUntil(master, "24 80");
    BOOST_TEST(first.find("/dev/pts/") != std::string::npos, first);
    BOOST_TEST(first.find("24 80") != std::string::npos, first);
    BOOST_REQUIRE(service->resize(s->session, 50, 132).ok());
    BOOST_REQUIRE(::write(master, "\n", 1) == 1);
    const auto second = readUntil(master, "50 132");
    BOOST_TEST(second.find("50 132") != std::string::npos, second);
    auto w = wait(s->session);
    BOOST_REQUIRE(w.ok());
    BOOST_TEST(w->exitCode == 0);
    BOOST_TEST(service->resize(s->session, 10, 10).error().name == "NoSuchSession");
}

BOOST_FIXTURE_TEST_CASE(exit_code_for_waiters_late_waiters_and_monitors, Fixture) {
    auto s = start(request({"sh", "-c", "exit 7"}));
    BOOST_REQUIRE(s.ok());
    auto w = wait(s->session);
    BOOST_REQUIRE(w.ok());
    BOOST_TEST(w->exitCode == 7);
    auto late = wait(s->session);
    BOOST_REQUIRE(late.ok());
    BOOST_TEST(late->exitCode == 7);
    BOOST_TEST(events.changes == 2);  // started, ended
    BOOST_TEST(service->runningSessions().empty());
    BOOST_REQUIRE(events.exited.size() == 1u);
    BOOST_TEST(events.exited[0].first == s->session);
    BOOST_TEST(events.exited[0].second.exitCode == 7);
    BOOST_TEST(wait(987654).error().name == "NoSuchSession");
}

BOOST_FIXTURE_TEST_CASE(tasks_that_do_not_run_get_named_errors_and_nothing_starts, Fixture) {
    directory.json = nlohmann::json{{"state", "exited"},
                                    {"pid", 0},
                                    {"unit", "a1-web.scope"},
                                    {"cgroup", "/x"},
                                    {"spec", {{"command", "/bin/true"}}}}
                         .dump();
    auto r = start(request({"true"}));
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "NotRunning");
    directory.error = makeError("NoSuchTask", "no task a1/web");
    auto o = once({"true"});
    BOOST_REQUIRE(!o.ok());
    BOOST_TEST(o.error().name == "NoSuchTask");
    BOOST_TEST(attacher.attached.empty());
    BOOST_TEST(service->activeSessions() == 0u);
}

BOOST_FIXTURE_TEST_CASE(a_pid_outside_the_tasks_scope_is_not_running, Fixture) {
    auto j = nlohmann::json::parse(directory.json);
    j["cgroup"] = "/nomad.slice/other.scope";
    directory.json = j.dump();
    auto r = start(request({"true"}));
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "NotRunning");
    BOOST_TEST(attacher.attached.empty());
}

BOOST_FIXTURE_TEST_CASE(bad_input_is_refused_before_anything_happens, Fixture) {
    std::optional<Result<ExecStarted>> r;
    service->start(request({}), [&](Result<ExecStarted> x) { r.emplace(std::move(x)); });
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->error().name == "InvalidArgument");
    auto tty = request({"sh"}, true);
    tty.rows = 0;
    r.reset();
    service->start(tty, [&](Result<ExecStarted> x) { r.emplace(std::move(x)); });
    BOOST_TEST(r->error().name == "InvalidArgument");
    std::optional<Result<OnceResult>> o;
    service->once(request({"true"}), 0, 10, [&](Result<OnceResult> x) { o.emplace(std::move(x)); });
    BOOST_TEST(o->error().name == "InvalidArgument");
    BOOST_TEST(service->resize(4711, 24, 80).error().name == "NoSuchSession");
    BOOST_TEST(service->resize(4711, 0, 80).error().name == "InvalidArgument");
    BOOST_TEST(attacher.attached.empty());
    BOOST_TEST(service->activeSessions() == 0u);

    auto s = start(request({"sleep", "30"}));
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(service->resize(s->session, 24, 80).error().name == "InvalidArgument");
    service->clientGone(":1.42");
    BOOST_REQUIRE(wait(s->session).ok());
}

BOOST_FIXTURE_TEST_CASE(sessions_are_limited, Fixture) {
    options.maxSessions = 2;
    make();
    directory.hold = true;
    int answered = 0;
    std::optional<Error> third;
    service->start(request({"true"}), [&](Result<ExecStarted>) { ++answered; });
    service->start(request({"true"}), [&](Result<ExecStarted>) { ++answered; });
    service->start(request({"true"}), [&](Result<ExecStarted> r) { third = r.error(); });
    BOOST_REQUIRE(third.has_value());
    BOOST_TEST(third->name == "Busy");
    BOOST_TEST(answered == 0);
    for (auto& h : directory.held) h(makeError("NoSuchTask", "gone"));
    BOOST_TEST(answered == 2);
    BOOST_TEST(service->activeSessions() == 0u);
    directory.hold = false;
    BOOST_TEST(once({"true"}).ok());
}

BOOST_FIXTURE_TEST_CASE(a_missing_command_is_no_such_binary, Fixture) {
    for (const auto* cmd : {"no-such-command-anywhere", "/no/such/binary"}) {
        auto r = start(request({cmd}));
        BOOST_REQUIRE(!r.ok());
        BOOST_TEST(r.error().name == "NoSuchBinary", cmd << ": " << r.error().message);
    }
    BOOST_TEST(runUntil([&] { return service->activeSessions() == 0; }, 5s));
}

BOOST_FIXTURE_TEST_CASE(nothing_runs_before_the_child_is_in_the_scope, Fixture) {
    const auto marker = tmp.path + "/ran";
    attacher.hold = true;
    std::optional<Result<ExecStarted>> r;
    service->start(request({"touch", marker}), [&](Result<ExecStarted> x) { r.emplace(std::move(x)); });
    runUntil([] { return false; }, 300ms);
    BOOST_TEST(!std::filesystem::exists(marker));
    BOOST_REQUIRE(attacher.held.size() == 1u);
    attacher.held[0](makeError("SystemdFailed", "no"));
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->error().name == "SystemdFailed");
    BOOST_TEST(runUntil([&] { return service->activeSessions() == 0; }, 5s));
    BOOST_TEST(!std::filesystem::exists(marker));

    attacher.held.clear();
    r.reset();
    service->start(request({"touch", marker}), [&](Result<ExecStarted> x) { r.emplace(std::move(x)); });
    runUntil([] { return false; }, 300ms);
    BOOST_TEST(!std::filesystem::exists(marker));
    BOOST_REQUIRE(attacher.held.size() == 1u);
    attacher.held[0]({});
    BOOST_REQUIRE(runUntil([&] { return r.has_value(); }));
    BOOST_REQUIRE(r->ok());
    BOOST_REQUIRE(wait((*r)->session).ok());
    BOOST_TEST(std::filesystem::exists(marker));
}

BOOST_FIXTURE_TEST_CASE(a_caller_leaving_hangs_up_its_sessions, Fixture) {
    auto s = start(request({"sleep", "30"}));
    BOOST_REQUIRE(s.ok());
    const auto running = service->runningSessions();
    BOOST_REQUIRE(running.size() == 1u);
    BOOST_TEST(running[0].session == s->session);
    BOOST_TEST(running[0].allocId == "a1");
    BOOST_TEST(running[0].task == "web");
    BOOST_TEST(!running[0].tty);
    service->clientGone(":1.99");  // someone else
    service->clientGone(":1.42");
    auto w = wait(s->session);
    BOOST_REQUIRE(w.ok());
    BOOST_TEST(w->signal == SIGHUP);
    BOOST_TEST(w->exitCode == 129);

    // The hangup only once the trap is set: under load the shell may not
    // have read it yet, and SIGHUP would end it before the kill is needed.
    const auto ready = tmp.path + "/hup-ignored";
    auto stubborn = start(request({"sh", "-c", "trap '' HUP; touch " + ready + "; sleep 30"}));
    BOOST_REQUIRE(stubborn.ok());
    BOOST_REQUIRE(runUntil([&] { return std::filesystem::exists(ready); }));
    service->clientGone(":1.42");
    auto k = wait(stubborn->session);
    BOOST_REQUIRE(k.ok());
    BOOST_TEST(k->signal == SIGKILL);
}

// A "task" in its own pid, mount and uts namespaces (unshare needs root;
// skipped without): the command runs in all three, through the relay that
// a new pid namespace needs, and its exit comes back through the relay.
BOOST_FIXTURE_TEST_CASE(joins_the_namespaces_of_a_task_that_has_its_own, Fixture) {
    if (::geteuid() != 0) {
        BOOST_TEST_MESSAGE("skipped: creating namespaces needs root");
        return;
    }
    const pid_t unshare = ::fork();
    if (unshare == 0) {
        ::execlp("unshare", "unshare", "--pid", "--fork", "--mount-proc", "--uts", "sh", "-c",
                 "hostname inner-host && exec sleep 60", static_cast<char*>(nullptr));
        _exit(127);
    }
    // The task is unshare's child: pid 1 of the new namespace, once it is sleep.
    pid_t task = 0;
    runUntil(
        [&] {
            auto children = taskscope::common::readFile("/proc/" + std::to_string(unshare) + "/task/" +
                                                        std::to_string(unshare) + "/children");
            if (!children || children->empty()) return false;
            task = std::stoi(*children);
            auto comm = taskscope::common::readFile("/proc/" + std::to_string(task) + "/comm");
            return comm && *comm == "sleep\n";
        },
        10s);
    if (task == 0) {
        ::kill(unshare, SIGKILL);
        ::waitpid(unshare, nullptr, 0);
        BOOST_TEST_MESSAGE("skipped: unshare did not start a task here");
        return;
    }
    auto j = nlohmann::json::parse(directory.json);
    j["pid"] = task;
    directory.json = j.dump();
    writeProcessSpec("/");

    auto r = once({"sh", "-c", "hostname; cat /proc/1/comm; echo $$"});
    BOOST_REQUIRE_MESSAGE(r.ok(), why(r));
    const auto out = text(*r);
    BOOST_TEST(out.rfind("inner-host\nsleep\n", 0) == 0, out);
    const int innerPid = std::stoi(out.substr(std::string("inner-host\nsleep\n").size()));
    BOOST_TEST(innerPid < 100, "pid in the task's namespace: " << innerPid);
    auto seven = once({"sh", "-c", "exit 7"});
    BOOST_REQUIRE(seven.ok());
    BOOST_TEST(seven->result.exitCode == 7);
    auto killed = once({"sh", "-c", "kill -TERM $$"});
    BOOST_REQUIRE(killed.ok());
    BOOST_TEST(killed->result.signal == SIGTERM);
    auto timed = once({"sh", "-c", "sleep 30"}, 300);
    BOOST_TEST(timed.error().name == "Timeout");
    auto s = start(request({"sh", "-c", "read x; tty; exit $x"}, true));
    BOOST_REQUIRE_MESSAGE(s.ok(), why(s));
    BOOST_REQUIRE(::write(s->fds[0].get(), "5\n", 2) == 2);
    BOOST_TEST(readUntil(s->fds[0].get(), "/dev/pts/").find("/dev/pts/") != std::string::npos);
    auto w = wait(s->session);
    BOOST_REQUIRE(w.ok());
    BOOST_TEST(w->exitCode == 5);

    ::kill(unshare, SIGKILL);
    ::kill(task, SIGKILL);
    ::waitpid(unshare, nullptr, 0);
}

namespace {

// systemd's fd store, played in memory: duplicates kept by name.
struct FakeStore : DescriptorStore {
    std::map<std::string, taskscope::common::UniqueFd> fds;
    Result<void> store(int fd, const std::string& name) override {
        fds[name] = taskscope::common::UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
        return {};
    }
    void drop(const std::string& name) override { fds.erase(name); }
};

size_t recordFiles(const std::string& dir) {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".json") ++n;
    return n;
}

}  // namespace

// A streamer restart, played by destroying the service and making a new one
// on the same records and stored descriptors: a session still running is
// taken over (waited for, resized, hung up), one that ended while nobody
// watched keeps its exit code, and no session number is handed out twice.
BOOST_FIXTURE_TEST_CASE(sessions_survive_a_restart_of_the_service, Fixture) {
    FakeStore store;
    options.recordDir = tmp.path + "/exec";
    options.descriptors = &store;
    make();
    BOOST_REQUIRE(service->restore({}).empty());

    auto pipes = start(request({"sh", "-c", "read line; exit 7"}));
    BOOST_REQUIRE_MESSAGE(pipes.ok(), why(pipes));
    auto tty = start(request({"sh", "-c", "read x; stty size; read y"}, true));
    BOOST_REQUIRE_MESSAGE(tty.ok(), why(tty));
    auto early = start(request({"sh", "-c", "read line; exit 3"}));
    BOOST_REQUIRE(early.ok());
    auto hungUp = start(request({"sleep", "30"}));
    BOOST_REQUIRE(hungUp.ok());
    BOOST_TEST(recordFiles(options.recordDir) == 4u);
    BOOST_TEST(store.fds.size() == 9u);  // four status pipes with their holds, one terminal

    service.reset();  // the streamer dies; the commands run on
    // One ends while no streamer runs.
    BOOST_REQUIRE(::write(early->fds[0].get(), "\n", 1) == 1);
    const auto keeperStatus = store.fds.at(statusFdName(early->session)).get();
    pollfd p{keeperStatus, POLLIN, 0};
    BOOST_REQUIRE(::poll(&p, 1, 10000) == 1);

    make();
    events.exited.clear();
    auto owners = service->restore(std::move(store.fds));
    store.fds.clear();
    BOOST_REQUIRE(owners.size() == 1u);
    BOOST_TEST(owners[0] == ":1.42");
    BOOST_REQUIRE(events.exited.size() == 1u);
    BOOST_TEST(events.exited[0].first == early->session);
    BOOST_TEST(events.exited[0].second.exitCode == 3);
    auto e = wait(early->session);
    BOOST_REQUIRE(e.ok());
    BOOST_TEST(e->exitCode == 3);
    BOOST_TEST(service->runningSessions().size() == 3u);

    // The terminal still resizes, and the command sees it.
    BOOST_REQUIRE(service->resize(tty->session, 33, 101).ok());
    BOOST_REQUIRE(::write(tty->fds[0].get(), "\n", 1) == 1);
    const auto size = readUntil(tty->fds[0].get(), "33 101");
    BOOST_TEST(size.find("33 101") != std::string::npos, size);

    // The exit code of a session taken over reaches its waiter.
    std::optional<Result<ExecResult>> seven;
    service->wait(pipes->session, [&](Result<ExecResult> r) { seven.emplace(std::move(r)); });
    BOOST_REQUIRE(::write(pipes->fds[0].get(), "\n", 1) == 1);
    BOOST_REQUIRE(runUntil([&] { return seven.has_value(); }));
    BOOST_REQUIRE_MESSAGE(seven->ok(), why(*seven));
    BOOST_TEST((*seven)->exitCode == 7);

    // A taken-over session is hung up like any when its caller leaves.
    service->clientGone(":1.42");
    auto hup = wait(hungUp->session);
    BOOST_REQUIRE(hup.ok());
    BOOST_TEST(hup->signal == SIGHUP);
    auto last = wait(tty->session);
    BOOST_REQUIRE(last.ok());

    BOOST_TEST(recordFiles(options.recordDir) == 0u);
    BOOST_TEST(store.fds.empty());
    auto next = start(request({"true"}));
    BOOST_REQUIRE(next.ok());
    BOOST_TEST(next->session > hungUp->session);
    BOOST_REQUIRE(wait(next->session).ok());
}

BOOST_FIXTURE_TEST_CASE(a_record_without_its_descriptors_is_dropped, Fixture) {
    FakeStore store;
    options.recordDir = tmp.path + "/exec";
    options.descriptors = &store;
    make();
    (void)service->restore({});
    auto s = start(request({"sh", "-c", "read line"}));
    BOOST_REQUIRE(s.ok());
    service.reset();
    make();
    // As after `systemctl stop`: the store was emptied.
    BOOST_TEST(service->restore({}).empty());
    BOOST_TEST(recordFiles(options.recordDir) == 0u);
    BOOST_TEST(wait(s->session).error().name == "NoSuchSession");
    s->fds.clear();  // the command reads end of file and ends
}

BOOST_AUTO_TEST_CASE(exec_fd_names_round_trip) {
    uint64_t id = 0;
    BOOST_TEST(parseExecFdName(statusFdName(42), id));
    BOOST_TEST(id == 42u);
    BOOST_TEST(parseExecFdName(statusHoldFdName(43), id));
    BOOST_TEST(id == 43u);
    BOOST_TEST(parseExecFdName(terminalFdName(7), id));
    BOOST_TEST(id == 7u);
    for (const char* other : {"a1-web.scope.stdout", "exec.x.status", "exec..pty", "exec.0.pty", "exec.5.tty"})
        BOOST_TEST(!parseExecFdName(other, id), other);
}
