#define BOOST_TEST_MODULE event_loop
#include <boost/test/unit_test.hpp>

#include <poll.h>
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
