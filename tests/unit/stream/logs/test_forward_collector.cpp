#define BOOST_TEST_MODULE stream_forward_collector
#include <boost/test/unit_test.hpp>

// The streamer between a task and its stdout_path/stderr_path (Nomad's log
// fifos) when the journal copies its output (issue 59): every byte reaches
// the way out once and in order, a full way out blocks rather than drops,
// and a path a task could have swapped is refused as the shim refuses it.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "stream/logs/forward_collector.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::stream::logs;
using taskscope::common::UniqueFd;
namespace fs = std::filesystem;

namespace {

struct Fixture {
    taskscope::test::TempDir tmp;
    std::string spool = tmp.path + "/t.stdout";  // the spool's fifo
    std::string nomad = tmp.path + "/.t.stdout.fifo";  // logmon's
    UniqueFd writer;  // the task
    Fixture() {
        BOOST_REQUIRE(::mkfifo(spool.c_str(), 0600) == 0);
        BOOST_REQUIRE(::mkfifo(nomad.c_str(), 0600) == 0);
    }
    UniqueFd spoolReader() {
        UniqueFd r(::open(spool.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
        writer.reset(::open(spool.c_str(), O_WRONLY | O_CLOEXEC));
        BOOST_REQUIRE(r && writer);
        return r;
    }
    void write(const std::string& s) const {
        BOOST_REQUIRE(::write(writer.get(), s.data(), s.size()) == static_cast<ssize_t>(s.size()));
    }
    // logmon: whatever the fifo holds now.
    static std::string readNow(int fd) {
        std::string out;
        char buf[65536];
        for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
        return out;
    }
};

std::string lines(int from, int to) {
    std::string s;
    for (int i = from; i <= to; ++i) s += "line " + std::to_string(i) + "\n";
    return s;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(fifo_to_fifo_moves_everything_and_the_tee_sees_the_same, Fixture) {
    UniqueFd logmon(::open(nomad.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    BOOST_REQUIRE(logmon);
    for (bool tee : {false, true}) {
        ForwardCollector c(spoolReader(), nomad, 0);
        std::string teed;
        if (tee) c.setTee([&](const char* d, size_t n) { teed.append(d, n); });
        const auto sent = lines(1, 500);
        write(sent);
        auto d = c.drain(1 << 20);
        BOOST_TEST(d.empty);
        BOOST_TEST(!d.blocked);
        BOOST_TEST(!d.failed);
        BOOST_TEST(d.moved == sent.size());
        BOOST_TEST(readNow(logmon.get()) == sent);
        BOOST_TEST(teed == (tee ? sent : ""));
        BOOST_TEST(c.dropped() == 0u);
    }
}

// logmon away or slow: the collector stops, says where to wait, and loses
// nothing; the task's next writes wait in the spool fifo.
BOOST_FIXTURE_TEST_CASE(a_full_way_out_blocks_and_loses_nothing, Fixture) {
    ForwardCollector c(spoolReader(), nomad, 0);
    std::string teed;
    c.setTee([&](const char* d, size_t n) { teed.append(d, n); });
    const auto sent = lines(1, 20000);  // ~250 KB: past a fifo's 64 KiB
    UniqueFd logmon(::open(nomad.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    BOOST_REQUIRE(logmon);
    std::string got;
    size_t off = 0, rounds = 0, blocks = 0;
    while ((got.size() < sent.size()) && ++rounds < 10000) {
        if (off < sent.size()) {
            const size_t n = std::min<size_t>(16384, sent.size() - off);
            write(sent.substr(off, n));
            off += n;
        }
        auto d = c.drain(1 << 20);
        if (d.blocked) {
            ++blocks;
            BOOST_TEST(c.blockedOn() >= 0);
            BOOST_TEST(!d.empty);
            got += readNow(logmon.get());  // room again
        } else if (off >= sent.size()) {
            got += readNow(logmon.get());
        }
    }
    BOOST_TEST(blocks > 0u);
    BOOST_TEST(got == sent);
    BOOST_TEST(teed == sent);
    BOOST_TEST(c.dropped() == 0u);
}

// The task ended and nobody reads: what is left goes, counted, and the
// journal's copy still gets it.
BOOST_FIXTURE_TEST_CASE(giving_up_drops_the_rest_and_counts_it, Fixture) {
    ForwardCollector c(spoolReader(), nomad, 0);
    std::string teed;
    c.setTee([&](const char* d, size_t n) { teed.append(d, n); });
    const auto sent = lines(1, 10000);
    write(sent.substr(0, 60000));
    auto d = c.drain(1 << 20);
    write(sent.substr(60000));  // fits the spool's fifo (64 KiB here, 1 MiB in the streamer)
    d = c.drain(1 << 20);
    BOOST_REQUIRE(d.blocked);
    c.giveUp();
    d = c.drain(1 << 20);
    BOOST_TEST(d.empty);
    BOOST_TEST(c.dropped() > 0u);
    BOOST_TEST(teed == sent);
    UniqueFd logmon(::open(nomad.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    BOOST_TEST(readNow(logmon.get()).size() + c.dropped() == sent.size());
}

BOOST_FIXTURE_TEST_CASE(a_file_is_appended_to_or_made, Fixture) {
    const auto file = tmp.path + "/out.log";
    ForwardCollector made(spoolReader(), file, 0);
    write("one\n");
    BOOST_TEST(made.drain(1 << 20).moved == 4u);
    BOOST_TEST(taskscope::test::slurp(file) == "one\n");
    struct stat st {};
    BOOST_REQUIRE(::stat(file.c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 07777) == 0600u);
    ForwardCollector again(spoolReader(), file, 0);
    write("two\n");
    BOOST_TEST(again.drain(1 << 20).moved == 4u);
    BOOST_TEST(taskscope::test::slurp(file) == "one\ntwo\n");
    // No path for the stream: it goes nowhere, as the shim's /dev/null.
    ForwardCollector none(spoolReader(), "", 0);
    write("three\n");
    auto d = none.drain(1 << 20);
    BOOST_TEST(d.moved == 6u);
    BOOST_TEST(!d.failed);
}

// A task may own the directory of its stdout_path (Nomad's alloc/logs is
// the task's to write under): a symlink or a second link there must not
// make root write elsewhere.
BOOST_FIXTURE_TEST_CASE(swapped_paths_are_refused_and_the_output_dropped, Fixture) {
    const auto target = tmp.path + "/precious";
    std::ofstream(target) << "keep\n";
    const auto link = tmp.path + "/link";
    fs::create_symlink(target, link);
    const auto hard = tmp.path + "/hard";
    fs::create_hard_link(target, hard);
    for (const auto& path : {link, hard, tmp.path + "/missing-dir/out"}) {
        ForwardCollector c(spoolReader(), path, 0);
        write("secret\n");
        auto d = c.drain(1 << 20);
        BOOST_REQUIRE_MESSAGE(d.failed.has_value(), path);
        BOOST_TEST(d.failed->name == "LogWriteFailed");
        BOOST_TEST(d.empty);
        BOOST_TEST(c.dropped() == 7u);
        BOOST_TEST(c.dropping());
    }
    BOOST_TEST(taskscope::test::slurp(target) == "keep\n");
    if (::geteuid() == 0) {
        // Owned by someone else than root or the task's user.
        const auto theirs = tmp.path + "/theirs";
        std::ofstream(theirs).flush();
        BOOST_REQUIRE(::chown(theirs.c_str(), 4242, 4242) == 0);
        ForwardCollector refused(spoolReader(), theirs, 1000);
        write("x\n");
        auto d = refused.drain(1 << 20);
        BOOST_REQUIRE(d.failed.has_value());
        BOOST_TEST(d.failed->message.find("neither root nor the task's user") != std::string::npos, d.failed->message);
        ForwardCollector taken(spoolReader(), theirs, 4242);
        write("y\n");
        BOOST_TEST(!taken.drain(1 << 20).failed);
        BOOST_TEST(taskscope::test::slurp(theirs) == "y\n");
    }
}

// A path that appears later (made by Nomad after the start) is opened on a
// later try, at most once a second, and the drop is reported with its size.
BOOST_FIXTURE_TEST_CASE(a_way_out_that_appears_later_is_taken, Fixture) {
    const auto late = tmp.path + "/late/out.fifo";
    ForwardCollector c(spoolReader(), late, 0);
    write("lost\n");
    auto d = c.drain(1 << 20);
    BOOST_TEST(d.failed.has_value());
    fs::create_directories(tmp.path + "/late");
    BOOST_REQUIRE(::mkfifo(late.c_str(), 0600) == 0);
    UniqueFd logmon(::open(late.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    write("kept\n");
    d = c.drain(1 << 20, ForwardCollector::Clock::now() + std::chrono::seconds(2));
    BOOST_TEST(!d.failed);
    BOOST_TEST(d.recoveredAfterDropping == 5u);
    BOOST_TEST(readNow(logmon.get()) == "kept\n");
}
