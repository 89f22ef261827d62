#define BOOST_TEST_MODULE event_loop
#include <boost/test/unit_test.hpp>

#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/unique_fd.hpp"

using namespace std::chrono_literals;
using taskscope::common::EventLoop;

// Posted work runs in the order posted, one piece per turn: a fd that is
// ready meanwhile is served between two pieces, not after all of them.
BOOST_AUTO_TEST_CASE(posted_work_runs_in_order_one_piece_per_turn) {
    EventLoop loop;
    int p[2];
    BOOST_REQUIRE(::pipe(p) == 0);
    taskscope::common::UniqueFd readEnd(p[0]), writeEnd(p[1]);
    std::vector<std::string> seen;
    loop.addFd(readEnd.get(), POLLIN, [&](short) {
        char c;
        [[maybe_unused]] auto n = ::read(readEnd.get(), &c, 1);
        seen.push_back("fd");
    });
    loop.post([&] {
        seen.push_back("a");
        // Ready from now on: served on the next turn, before "b".
        [[maybe_unused]] auto n = ::write(writeEnd.get(), "x", 1);
    });
    loop.post([&] { seen.push_back("b"); });
    loop.post([&] {
        seen.push_back("c");
        loop.post([&] {
            seen.push_back("d");
            loop.quit();
        });
    });
    loop.addTimer(EventLoop::Clock::now() + 5s, [&] { loop.quit(1); });  // never hangs the suite
    BOOST_TEST(loop.run() == 0);
    const std::vector<std::string> want{"a", "fd", "b", "c", "d"};
    BOOST_TEST(seen == want, boost::test_tools::per_element());
}

// Work posted while the loop is not running waits for its next run.
BOOST_AUTO_TEST_CASE(posted_work_waits_for_the_next_run) {
    EventLoop loop;
    bool ran = false;
    loop.post([&] {
        ran = true;
        loop.quit();
    });
    BOOST_TEST(!ran);
    loop.addTimer(EventLoop::Clock::now() + 5s, [&] { loop.quit(1); });
    BOOST_TEST(loop.run() == 0);
    BOOST_TEST(ran);
}

// Two watches on one fd (the kernel's epoll set takes a fd once): each is
// served its own events only, and removing one leaves the other.
BOOST_AUTO_TEST_CASE(two_watches_on_one_fd_each_get_their_own_events) {
    EventLoop loop;
    int p[2];
    BOOST_REQUIRE(::pipe(p) == 0);
    taskscope::common::UniqueFd readEnd(p[0]), writeEnd(p[1]);
    int reads = 0, writes = 0;
    uint64_t writer = 0;
    writer = loop.addFd(writeEnd.get(), POLLOUT, [&](short revents) {
        BOOST_TEST(revents == POLLOUT);
        ++writes;
        [[maybe_unused]] auto n = ::write(writeEnd.get(), "x", 1);
        loop.removeFd(writer);
    });
    // A second watch on the write end that wants nothing it will get.
    loop.addFd(writeEnd.get(), POLLPRI, [&](short) { BOOST_FAIL("served events it did not ask for"); });
    loop.addFd(readEnd.get(), POLLIN, [&](short revents) {
        BOOST_TEST(revents == POLLIN);
        ++reads;
        loop.quit();
    });
    loop.addTimer(EventLoop::Clock::now() + 5s, [&] { loop.quit(1); });
    BOOST_TEST(loop.run() == 0);
    BOOST_TEST(writes == 1);
    BOOST_TEST(reads == 1);
}

// A fd closed by its owner before its watch is removed, its number then
// reused by another: the new watch is served, and removing the old one
// later leaves it alone.
BOOST_AUTO_TEST_CASE(a_reused_fd_number_is_watched_again) {
    EventLoop loop;
    int p[2];
    BOOST_REQUIRE(::pipe(p) == 0);
    const int firstRead = p[0];
    const auto stale = loop.addFd(firstRead, POLLIN, [&](short) { BOOST_FAIL("the closed pipe was served"); });
    ::close(p[0]);
    ::close(p[1]);
    BOOST_REQUIRE(::pipe(p) == 0);
    BOOST_REQUIRE(p[0] == firstRead);  // the lowest free number, as before
    taskscope::common::UniqueFd readEnd(p[0]), writeEnd(p[1]);
    bool served = false;
    loop.addFd(readEnd.get(), POLLIN, [&](short) {
        served = true;
        loop.quit();
    });
    loop.removeFd(stale);
    [[maybe_unused]] auto n = ::write(writeEnd.get(), "x", 1);
    loop.addTimer(EventLoop::Clock::now() + 5s, [&] { loop.quit(1); });
    BOOST_TEST(loop.run() == 0);
    BOOST_TEST(served);
}

// epoll refuses regular files; poll(2) has them always ready, and so does the loop.
BOOST_AUTO_TEST_CASE(a_regular_file_is_always_ready) {
    EventLoop loop;
    char path[] = "/tmp/taskscope-event-loop-XXXXXX";
    taskscope::common::UniqueFd file(::mkstemp(path));
    BOOST_REQUIRE(file);
    ::unlink(path);
    int served = 0;
    const auto h = loop.addFd(file.get(), POLLIN, [&](short revents) {
        BOOST_TEST((revents & POLLIN));
        if (++served == 3) loop.quit();
    });
    loop.addTimer(EventLoop::Clock::now() + 5s, [&] { loop.quit(1); });
    BOOST_TEST(loop.run() == 0);
    loop.removeFd(h);
    BOOST_TEST(served == 3);
}
