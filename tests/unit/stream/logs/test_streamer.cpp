#define BOOST_TEST_MODULE stream_streamer
#include <boost/test/unit_test.hpp>

#include <stdlib.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "common/event_loop.hpp"
#include "common/files.hpp"
#include "common/unique_fd.hpp"
#include "stream/logs/streamer.hpp"
#include "stream/logs/test_logs.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::stream::logs;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

struct Fixture {
    taskscope::test::TempDir tmp;
    taskscope::common::EventLoop loop;
    StreamerOptions options;
    std::string logs = tmp.path + "/logs";

    Fixture() {
        // Not under systemd: nothing to take from or give to an fd store.
        ::unsetenv("NOTIFY_SOCKET");
        ::unsetenv("LISTEN_FDS");
        options.spoolDir = tmp.path + "/spool";
        options.stateDir = tmp.path + "/state";
        fs::create_directories(options.stateDir + "/done");
        fs::create_directories(options.spoolDir);
    }
    TaskLogs task(const std::string& alloc, const std::string& name) const {
        TaskLogs t;
        t.unit = alloc + "-" + name + ".scope";
        t.allocId = alloc;
        t.task = name;
        t.logDir = logs + "/" + alloc;
        return t;
    }
    // A task whose logs an earlier run completed: its record and its files.
    void done(const std::string& alloc, const std::string& name) {
        const auto t = task(alloc, name);
        BOOST_REQUIRE(taskscope::common::writeFileAtomic(record(t.unit), describe(t)).ok());
        fs::create_directories(t.logDir);
        std::ofstream(t.logDir + "/" + name + ".stdout.0") << name << "\n";
        std::ofstream(t.logDir + "/" + name + ".stderr.0");
    }
    // A task in the manager's spool, as manager/records/log_spool.cpp makes it.
    void spooled(const std::string& alloc, const std::string& name, bool exited) {
        auto t = task(alloc, name);
        t.exited = exited;
        if (!exited)
            for (const char* s : kStreams)
                BOOST_REQUIRE(::mkfifo((options.spoolDir + "/" + t.unit + "." + s).c_str(), 0600) == 0);
        BOOST_REQUIRE(taskscope::common::writeFileAtomic(options.spoolDir + "/" + t.unit + ".json", describe(t)).ok());
    }
    std::string record(const std::string& unit) const { return options.stateDir + "/done/" + unit + ".json"; }
    // A running task's spool entry (its fifos, its description); the
    // description's path, to write again.
    std::string spooledWithFifos(const TaskLogs& t) const {
        for (const char* s : kStreams)
            BOOST_REQUIRE(::mkfifo((options.spoolDir + "/" + t.unit + "." + s).c_str(), 0600) == 0);
        const auto description = options.spoolDir + "/" + t.unit + ".json";
        BOOST_REQUIRE(taskscope::common::writeFileAtomic(description, describe(t)).ok());
        return description;
    }
    // The task's end of a spool fifo (once the streamer holds the other).
    taskscope::common::UniqueFd taskEnd(const TaskLogs& t, const char* stream) const {
        taskscope::common::UniqueFd fd(
            ::open((options.spoolDir + "/" + t.unit + "." + stream).c_str(), O_WRONLY | O_CLOEXEC));
        BOOST_REQUIRE(fd);
        return fd;
    }
    // journald's stream socket, as a plain listening socket (what journald
    // makes of the lines is the system tier's); the streamer is pointed at it.
    taskscope::common::UniqueFd journald() {
        const std::string path = tmp.path + "/journal.sock";
        taskscope::common::UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        path.copy(sa.sun_path, path.size());
        BOOST_REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
        BOOST_REQUIRE(::listen(listener.get(), 8) == 0);
        options.journalSocket = path;
        return listener;
    }
    void turn(std::chrono::milliseconds d) {
        loop.addTimer(taskscope::common::EventLoop::Clock::now() + d, [this] { loop.quit(); });
        loop.run();
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_forgotten_task_leaves_no_record_and_its_alloc_dir_goes_with_the_last, Fixture) {
    done("a1", "web");
    done("a1", "db");
    done("a2", "x");
    Streamer s(loop, options);
    BOOST_REQUIRE(s.start().ok());
    BOOST_TEST(s.doneCount() == 3u);

    s.forget("a1-web.scope");
    BOOST_TEST(!fs::exists(record("a1-web.scope")));
    BOOST_TEST(s.doneCount() == 2u);
    // db still belongs to a1: the allocation's logs stay (Nomad's retention).
    BOOST_TEST(fs::exists(logs + "/a1/web.stdout.0"));
    BOOST_TEST(!s.readLogs("a1", "web", "stdout", "start", 0, false).ok());
    BOOST_TEST(s.readLogs("a1", "db", "stdout", "start", 0, false).ok());

    s.forget("a1-db.scope");
    BOOST_TEST(!fs::exists(logs + "/a1"));
    BOOST_TEST(fs::exists(logs + "/a2/x.stdout.0"));
    s.forget("a1-db.scope");  // twice, or a task never seen: nothing happens
    s.forget("zz-none.scope");
    BOOST_TEST(s.doneCount() == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_listing_removes_what_was_forgotten_while_away, Fixture) {
    done("a1", "web");
    done("a2", "x");
    done("a2", "y");
    Streamer s(loop, options);
    BOOST_REQUIRE(s.start().ok());
    s.retainOnly({"a2-y.scope", "a9-other.scope"});
    BOOST_TEST(s.doneCount() == 1u);
    BOOST_TEST(!fs::exists(record("a1-web.scope")));
    BOOST_TEST(!fs::exists(record("a2-x.scope")));
    BOOST_TEST(fs::exists(record("a2-y.scope")));
    BOOST_TEST(!fs::exists(logs + "/a1"));
    BOOST_TEST(fs::exists(logs + "/a2/x.stdout.0"));  // y keeps a2's directory
}

BOOST_FIXTURE_TEST_CASE(a_task_forgotten_while_drained_goes_once_drained, Fixture) {
    spooled("a3", "t", false);
    spooled("a4", "u", false);
    Streamer s(loop, options);
    BOOST_REQUIRE(s.start().ok());
    BOOST_TEST(s.taskCount() == 2u);
    s.forget("a3-t.scope");
    // u has not exited: the manager may not have published it yet, so a
    // listing without it leaves it alone.
    s.retainOnly({});
    BOOST_TEST(fs::exists(logs + "/a3"));
    spooled("a3", "t", true);
    spooled("a4", "u", true);
    turn(200ms);
    BOOST_TEST(s.taskCount() == 0u);
    BOOST_TEST(!fs::exists(record("a3-t.scope")));
    BOOST_TEST(!fs::exists(logs + "/a3"));
    BOOST_TEST(fs::exists(record("a4-u.scope")));
    BOOST_TEST(s.doneCount() == 1u);
}

// Thousands of tasks ending at once can overflow the spool's change events
// (fs.inotify.max_queued_events); a scan of the spool then does what the
// lost events would have done, and the events that do arrive late change
// nothing.
BOOST_FIXTURE_TEST_CASE(a_scan_of_the_spool_does_what_lost_events_would_have, Fixture) {
    spooled("a5", "ends", false);
    spooled("a5", "taken", false);
    Streamer s(loop, options);
    BOOST_REQUIRE(s.start().ok());
    BOOST_TEST(s.taskCount() == 2u);
    // Changes the streamer has not been told of (the loop does not run
    // until the scan is done): an exit, a start the manager took back, a
    // new task.
    spooled("a5", "ends", true);
    fs::remove(options.spoolDir + "/a5-taken.scope.json");
    spooled("a6", "new", false);
    s.rescanSpool();
    BOOST_TEST(s.taskCount() == 1u);  // a6-new
    BOOST_TEST(fs::exists(record("a5-ends.scope")));
    BOOST_TEST(!fs::exists(options.spoolDir + "/a5-ends.scope.json"));
    BOOST_TEST(s.doneCount() == 1u);
    turn(200ms);
    BOOST_TEST(s.taskCount() == 1u);
    BOOST_TEST(s.doneCount() == 1u);
    BOOST_TEST(fs::exists(record("a5-ends.scope")));
}

// A task run again under the same name while events were lost: its entry
// was made again with new fifos (the old ones unlinked), and the scan lets
// go of the old fifos and reads the new ones.
BOOST_FIXTURE_TEST_CASE(a_scan_reads_the_new_fifos_of_a_task_run_again, Fixture) {
    spooled("a7", "again", false);
    Streamer s(loop, options);
    BOOST_REQUIRE(s.start().ok());
    turn(50ms);
    for (const char* name : {".json", ".stdout", ".stderr"})
        fs::remove(options.spoolDir + "/a7-again.scope" + name);
    spooled("a7", "again", false);
    // Held as the new run's shim holds it: what is written stays in the pipe.
    const auto fifo = options.spoolDir + "/a7-again.scope.stdout";
    taskscope::common::UniqueFd shim(::open(fifo.c_str(), O_RDWR | O_CLOEXEC));
    BOOST_REQUIRE(shim);
    s.rescanSpool();
    // No descriptor of ours is left on the old, unlinked fifos.
    for (const auto& fd : fs::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const auto target = fs::read_symlink(fd.path(), ec).string();
        const bool oldFifo =
            target.find("a7-again.scope.std") != std::string::npos && target.find("(deleted)") != std::string::npos;
        BOOST_TEST(!oldFifo, target);
    }
    BOOST_REQUIRE(::write(shim.get(), "second run\n", 11) == 11);
    turn(200ms);
    std::ifstream in(logs + "/a7/again.stdout.0");
    std::string line;
    std::getline(in, line);
    BOOST_TEST(line == "second run");
    BOOST_TEST(s.taskCount() == 1u);
}

// log_journal: the streamer sends the task's lines to journald's socket
// (here a plain listening socket: what journald makes of them is the
// system tier's), and a task's end waits until journald has read them,
// since the task's pid names it only until its shim is released.
BOOST_FIXTURE_TEST_CASE(a_journal_tasks_end_waits_until_journald_has_read_its_lines, Fixture) {
    auto listener = journald();
    options.journalSettleLimit = 5s;

    auto t = task("a7", "web");
    t.journal = true;
    t.taskPid = ::getpid();
    for (const char* s : kStreams)
        BOOST_REQUIRE(::mkfifo((options.spoolDir + "/" + t.unit + "." + s).c_str(), 0600) == 0);
    const auto description = options.spoolDir + "/" + t.unit + ".json";
    BOOST_REQUIRE(taskscope::common::writeFileAtomic(description, describe(t)).ok());
    Streamer s(loop, options);
    BOOST_REQUIRE(s.start().ok());
    taskscope::common::UniqueFd out(::open((options.spoolDir + "/" + t.unit + ".stdout").c_str(), O_WRONLY | O_CLOEXEC));
    BOOST_REQUIRE(::write(out.get(), "hello\nworld\n", 12) == 12);
    turn(100ms);
    t.exited = true;
    BOOST_REQUIRE(taskscope::common::writeFileAtomic(description, describe(t)).ok());
    turn(300ms);
    BOOST_TEST(s.taskCount() == 1u);  // journald has not read yet

    taskscope::common::UniqueFd peer(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    BOOST_REQUIRE(peer);
    char buf[4096];
    const ssize_t n = ::read(peer.get(), buf, sizeof buf);
    BOOST_REQUIRE(n > 0);
    BOOST_TEST(std::string(buf, static_cast<size_t>(n)) == "web\na7-web.scope\n6\n0\n0\n0\n0\nhello\nworld\n");
    turn(200ms);
    BOOST_TEST(s.taskCount() == 0u);
    BOOST_TEST(fs::exists(record(t.unit)));
    const auto state = s.journalState("a7", "web");
    BOOST_REQUIRE(state.ok());
    BOOST_TEST(state->enabled);
    BOOST_TEST(state->counts.bytesSent == 12u);
    BOOST_TEST(state->counts.linesDropped == 0u);
    BOOST_TEST(readAll(logs + "/a7", "web.stdout") == "hello\nworld\n");  // the files have them all the same
}

// A task started with stdout_path/stderr_path (Nomad's log fifos) whose
// output the journal copies (issue 59): the streamer writes the fifo that
// logmon reads, sends the same lines to journald, keeps no files of its
// own, and says so to a reader of its logs.
BOOST_FIXTURE_TEST_CASE(forwarded_output_reaches_nomads_fifo_and_the_journal, Fixture) {
    auto listener = journald();

    const auto nomad = tmp.path + "/.web.stdout.fifo";
    BOOST_REQUIRE(::mkfifo(nomad.c_str(), 0600) == 0);
    taskscope::common::UniqueFd logmon(::open(nomad.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    auto t = task("a8", "web");
    t.journal = true;
    t.taskPid = ::getpid();
    t.forward = taskscope::wire::SpoolDescription::Forward{nomad, "", 0};
    const auto description = spooledWithFifos(t);
    Streamer s(loop, options);
    BOOST_REQUIRE(s.start().ok());
    auto out = taskEnd(t, "stdout"), err = taskEnd(t, "stderr");
    BOOST_REQUIRE(::write(out.get(), "hello\n", 6) == 6);
    BOOST_REQUIRE(::write(err.get(), "oops\n", 5) == 5);  // stderr_path "": nowhere, as /dev/null
    turn(100ms);
    char buf[4096];
    ssize_t n = ::read(logmon.get(), buf, sizeof buf);
    BOOST_REQUIRE(n > 0);
    BOOST_TEST(std::string(buf, static_cast<size_t>(n)) == "hello\n");
    taskscope::common::UniqueFd peer(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    BOOST_REQUIRE(peer);
    n = ::read(peer.get(), buf, sizeof buf);
    BOOST_REQUIRE(n > 0);
    BOOST_TEST(std::string(buf, static_cast<size_t>(n)) == "web\na8-web.scope\n6\n0\n0\n0\n0\nhello\n");
    BOOST_TEST(!fs::exists(logs + "/a8"));  // no files of ours
    auto r = s.readLogs("a8", "web", "stdout", "start", 0, false);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "LogsDisabled");
    BOOST_TEST(r.error().message.find("stdout_path") != std::string::npos, r.error().message);
}

// Nobody reads Nomad's fifo once the task has ended (logmon gone with its
// allocation): its logs complete after forwardSettleLimit, the rest
// dropped, rather than holding the task's shim forever. Until then, a full
// fifo costs nothing: it waits.
BOOST_FIXTURE_TEST_CASE(an_ended_tasks_output_nobody_takes_is_dropped_after_the_limit, Fixture) {
    options.forwardSettleLimit = 400ms;
    const auto nomad = tmp.path + "/.job.stdout.fifo";
    BOOST_REQUIRE(::mkfifo(nomad.c_str(), 0600) == 0);
    // A logmon that holds the fifo and reads nothing (stopped).
    taskscope::common::UniqueFd logmon(::open(nomad.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    BOOST_REQUIRE(logmon);
    auto t = task("a9", "job");
    t.forward = taskscope::wire::SpoolDescription::Forward{nomad, tmp.path + "/job.stderr", 0};
    const auto description = spooledWithFifos(t);
    Streamer s(loop, options);
    BOOST_REQUIRE(s.start().ok());
    auto out = taskEnd(t, "stdout"), err = taskEnd(t, "stderr");
    const std::string chunk(100 * 1024, 'x');  // past the fifo's 64 KiB; the spool's holds 1 MiB
    BOOST_REQUIRE(::write(out.get(), chunk.data(), chunk.size()) == static_cast<ssize_t>(chunk.size()));
    BOOST_REQUIRE(::write(err.get(), "to a file\n", 10) == 10);
    turn(100ms);
    t.exited = true;
    BOOST_REQUIRE(taskscope::common::writeFileAtomic(description, describe(t)).ok());
    turn(200ms);
    BOOST_TEST(s.taskCount() == 1u);  // still waiting for a reader
    turn(500ms);
    BOOST_TEST(s.taskCount() == 0u);
    BOOST_TEST(fs::exists(record(t.unit)));
    BOOST_TEST(taskscope::test::slurp(tmp.path + "/job.stderr") == "to a file\n");
    // What the fifo did take is there for logmon when it reads again.
    char buf[65536];
    size_t got = 0;
    for (ssize_t n; (n = ::read(logmon.get(), buf, sizeof buf)) > 0;) got += static_cast<size_t>(n);
    BOOST_TEST(got > 0u);
    BOOST_TEST(got < chunk.size());
}
