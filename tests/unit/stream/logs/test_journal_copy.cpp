#define BOOST_TEST_MODULE stream_journal_copy
#include <boost/test/unit_test.hpp>

// The journal's copy as a sender: its header, its credentials, what it
// queues, drops and counts. The peer here is a plain listening socket, so
// these cases prove our framing and our bounds only; that journald places
// the lines in the task's unit is proven against systemd itself
// (tests/system/test_journal_copy.sh).

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "stream/logs/collector.hpp"
#include "stream/logs/journal_copy.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::stream::logs;
using taskscope::common::UniqueFd;
using Clock = JournalCopy::Clock;

namespace {

struct Journald {
    taskscope::test::TempDir tmp;
    std::string path = tmp.path + "/stdout";
    UniqueFd listener;
    UniqueFd peer;

    void listen() {
        listener.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        path.copy(sa.sun_path, path.size());
        BOOST_REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
        BOOST_REQUIRE(::listen(listener.get(), 8) == 0);
    }
    bool accept() {
        peer.reset(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!peer) return false;
        const int one = 1;
        ::setsockopt(peer.get(), SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
        return true;
    }
    /// Everything there now, and the pid of the last credentials seen.
    std::string read(pid_t* pid = nullptr) {
        std::string got;
        for (;;) {
            char buf[65536];
            union {
                char c[CMSG_SPACE(sizeof(ucred))];
                cmsghdr align;
            } control{};
            iovec iov{buf, sizeof buf};
            msghdr m{};
            m.msg_iov = &iov;
            m.msg_iovlen = 1;
            m.msg_control = control.c;
            m.msg_controllen = sizeof control.c;
            const ssize_t n = ::recvmsg(peer.get(), &m, MSG_DONTWAIT);
            if (n <= 0) return got;
            for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
                if (pid && c->cmsg_type == SCM_CREDENTIALS) *pid = reinterpret_cast<ucred*>(CMSG_DATA(c))->pid;
            got.append(buf, static_cast<size_t>(n));
        }
    }
};

JournalCopy::Options options(const Journald& j, size_t maxQueued = 256 << 10) {
    JournalCopy::Options o;
    o.socketPath = j.path;
    o.identifier = "web";
    o.unit = "a1-web.scope";
    o.priority = 3;
    o.maxQueued = maxQueued;
    return o;
}

const std::string kHeader = "web\na1-web.scope\n3\n0\n0\n0\n0\n";

}  // namespace

BOOST_AUTO_TEST_CASE(sends_the_header_then_the_lines_as_the_tasks_pid) {
    Journald j;
    j.listen();
    JournalCopy copy(options(j));
    copy.setPid(::getpid());
    copy.append("one\ntw", 6);
    copy.append("o\n", 2);
    BOOST_REQUIRE(j.accept());
    pid_t pid = 0;
    BOOST_TEST(j.read(&pid) == kHeader + "one\ntwo\n");
    BOOST_TEST(pid == ::getpid());
    BOOST_TEST(copy.counts().bytesSent == 8u);
    BOOST_TEST(copy.counts().linesDropped == 0u);
    BOOST_TEST(copy.settled());
}

BOOST_AUTO_TEST_CASE(nothing_is_sent_before_the_pid_is_known) {
    Journald j;
    j.listen();
    JournalCopy copy(options(j));
    copy.append("early\n", 6);
    copy.flush();
    BOOST_TEST(!j.accept());  // no connection: nothing could be placed yet
    BOOST_TEST(!copy.settled());
    copy.setPid(::getpid());
    copy.flush();
    BOOST_REQUIRE(j.accept());
    BOOST_TEST(j.read() == kHeader + "early\n");
}

BOOST_AUTO_TEST_CASE(a_header_line_never_holds_a_newline) {
    Journald j;
    j.listen();
    auto o = options(j);
    o.identifier = "we\nb";
    JournalCopy copy(o);
    copy.setPid(::getpid());
    copy.append("x\n", 2);
    BOOST_REQUIRE(j.accept());
    BOOST_TEST(j.read() == "we_b\na1-web.scope\n3\n0\n0\n0\n0\nx\n");
}

BOOST_AUTO_TEST_CASE(a_slow_journald_costs_whole_lines_and_they_are_counted) {
    Journald j;
    j.listen();
    JournalCopy copy(options(j, 4096));
    copy.setPid(::getpid());
    copy.append("hello\n", 6);
    BOOST_REQUIRE(j.accept());
    // journald reads nothing: the socket's buffer fills, then our queue.
    std::string all = "hello\n";
    uint64_t lines = 1;
    for (int i = 0; i < 200000 && !copy.counts().linesDropped; ++i) {
        const std::string line = "line " + std::to_string(i) + " " + std::string(100, 'x') + "\n";
        // Each line in two writes: a line the task split is still one.
        copy.append(line.data(), 10);
        copy.append(line.data() + 10, line.size() - 10);
        all += line;
        ++lines;
    }
    BOOST_REQUIRE(copy.counts().linesDropped > 0u);
    BOOST_TEST(copy.blocked());
    for (int i = 0; i < 50; ++i) {
        const std::string line = "late " + std::to_string(i) + "\n";
        copy.append(line.data(), line.size());
        all += line;
        ++lines;
    }
    // journald catches up: what reaches it is whole lines, in order.
    std::string got;
    for (int round = 0; round < 10000 && !(copy.settled() && !copy.blocked()); ++round) {
        got += j.read();
        copy.flush();
    }
    got += j.read();
    BOOST_REQUIRE(got.rfind(kHeader, 0) == 0);
    got.erase(0, kHeader.size());
    BOOST_TEST(got.back() == '\n');
    size_t at = 0;
    uint64_t gotLines = 0, cut = 0;
    size_t from = 0;  // each line received is one the task wrote, after the one before
    while (at < got.size()) {
        const size_t nl = got.find('\n', at);
        const std::string line = got.substr(at, nl - at);
        const size_t where = all.find(line, from);
        BOOST_REQUIRE_MESSAGE(where != std::string::npos && (where == 0 || all[where - 1] == '\n'),
                              "not a line of the task's: " << line);
        // Whole, or cut where the queue filled with the line partly sent
        // (then it is counted as dropped too).
        if (all[where + line.size()] != '\n') ++cut;
        from = where + line.size();
        ++gotLines;
        at = nl + 1;
    }
    BOOST_TEST(cut <= copy.counts().linesDropped);
    BOOST_TEST(gotLines - cut + copy.counts().linesDropped == lines);
    BOOST_TEST(copy.counts().bytesSent + copy.counts().bytesDropped == all.size() + cut);
    BOOST_TEST(copy.counts().bytesSent == got.size());
}

BOOST_AUTO_TEST_CASE(journald_away_drops_and_counts_then_the_copy_resumes_at_a_line) {
    Journald j;  // not listening yet
    JournalCopy copy(options(j));
    copy.setPid(::getpid());
    const auto t0 = Clock::now();
    copy.append("a\nb\npart", 8, t0);
    BOOST_TEST(copy.counts().linesDropped == 3u);
    BOOST_TEST(copy.counts().bytesDropped == 8u);
    j.listen();
    // At most one try a second: still dropping. The rest of "partial" is
    // not a line of its own in the journal, and not counted again.
    copy.append("ial\nmid\n", 8, t0 + std::chrono::milliseconds(100));
    BOOST_TEST(!j.accept());
    BOOST_TEST(copy.counts().linesDropped == 4u);
    copy.append("c\n", 2, t0 + std::chrono::seconds(2));
    BOOST_REQUIRE(j.accept());
    BOOST_TEST(j.read() == kHeader + "c\n");
    BOOST_TEST(copy.counts().bytesDropped == 16u);
}

BOOST_AUTO_TEST_CASE(journald_gone_mid_stream_drops_the_queue_and_reconnects) {
    Journald j;
    j.listen();
    JournalCopy copy(options(j));
    copy.setPid(::getpid());
    const auto t0 = Clock::now();
    copy.append("first\n", 6, t0);
    BOOST_REQUIRE(j.accept());
    BOOST_TEST(j.read() == kHeader + "first\n");
    j.peer.reset();  // journald restarts
    j.listener.reset();
    ::unlink(j.path.c_str());
    j.listen();
    copy.append("lost\n", 5, t0);                            // EPIPE: the socket is gone
    copy.append("second\n", 7, t0 + std::chrono::seconds(2));  // connects again
    BOOST_REQUIRE(j.accept());
    BOOST_TEST(j.read() == kHeader + "second\n");
    BOOST_TEST(copy.counts().linesDropped == 1u);
}

BOOST_AUTO_TEST_CASE(a_reaped_pid_places_nothing_and_everything_after_is_dropped) {
    Journald j;
    j.listen();
    JournalCopy copy(options(j));
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    BOOST_REQUIRE(::waitpid(child, nullptr, 0) == child);
    copy.setPid(child);  // reaped: sendmsg says ESRCH (or EPERM, not root)
    copy.append("x\n", 2);
    copy.append("y\n", 2);
    BOOST_TEST(copy.counts().bytesSent == 0u);
    BOOST_TEST(copy.counts().linesDropped == 2u);
    BOOST_TEST(copy.settled());
}

BOOST_AUTO_TEST_CASE(settled_only_once_journald_has_read_everything) {
    Journald j;
    j.listen();
    JournalCopy copy(options(j));
    copy.setPid(::getpid());
    copy.append("x\n", 2);
    BOOST_REQUIRE(j.accept());
    BOOST_TEST(!copy.settled());  // unread in the socket
    (void)j.read();
    BOOST_TEST(copy.settled());
}

BOOST_AUTO_TEST_CASE(the_collector_hands_the_copy_what_it_spliced_into_the_file) {
    taskscope::test::TempDir tmp;
    const std::string fifo = tmp.path + "/t.stdout";
    BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    UniqueFd reader(::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    UniqueFd writer(::open(fifo.c_str(), O_WRONLY | O_CLOEXEC));
    // Small files: the copy must follow the rotations.
    StreamCollector c(std::move(reader), Rotator(tmp.path, "t.stdout", 100, 1000));
    BOOST_REQUIRE(c.open().ok());
    std::string teed;
    c.setTee([&](const char* data, size_t size) { teed.append(data, size); });
    std::string sent;
    for (int i = 1; i <= 3000; ++i) sent += std::to_string(i) + "\n";
    BOOST_REQUIRE(::write(writer.get(), sent.data(), sent.size()) == static_cast<ssize_t>(sent.size()));
    while (!c.drain(1 << 20).empty) {
    }
    BOOST_TEST(teed == sent);
}
