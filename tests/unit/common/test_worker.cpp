#define BOOST_TEST_MODULE worker
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common/worker.hpp"
#include "support/run_loop.hpp"

using taskscope::common::EventLoop;
using taskscope::common::Worker;
using taskscope::test::runUntil;
using namespace std::chrono_literals;

// One thread: the work runs off the loop's thread, and results come back
// on it in the order the work was submitted.
BOOST_AUTO_TEST_CASE(one_thread_keeps_the_order_and_delivers_on_the_loop) {
    EventLoop loop;
    Worker w(loop);
    const auto loopThread = std::this_thread::get_id();
    std::vector<int> seen;
    bool offLoop = true;
    for (int i = 0; i < 20; ++i)
        w.submit([i, loopThread, &offLoop, &seen]() -> std::function<void()> {
            offLoop = offLoop && std::this_thread::get_id() != loopThread;
            return [i, &seen] { seen.push_back(i); };
        });
    BOOST_REQUIRE(runUntil(loop, [&] { return seen.size() == 20; }));
    BOOST_TEST(offLoop);
    for (int i = 0; i < 20; ++i) BOOST_TEST(seen[static_cast<size_t>(i)] == i);
}

// Several threads: pieces that block run at once (a CNI plugin of one
// allocation does not hold another's).
BOOST_AUTO_TEST_CASE(several_threads_run_work_at_once) {
    EventLoop loop;
    Worker w(loop, 4);
    std::atomic<int> inside{0}, most{0};
    int done = 0;
    for (int i = 0; i < 4; ++i)
        w.submit([&]() -> std::function<void()> {
            const int now = ++inside;
            for (int m = most; now > m && !most.compare_exchange_weak(m, now);) {
            }
            std::this_thread::sleep_for(100ms);
            --inside;
            return [&] { ++done; };
        });
    BOOST_REQUIRE(runUntil(loop, [&] { return done == 4; }));
    BOOST_TEST(most.load() > 1);
}

// waitIdle blocks for the work (not its results); a worker destroyed with
// work queued finishes what runs and drops the rest, delivering nothing.
BOOST_AUTO_TEST_CASE(wait_idle_and_destruction) {
    EventLoop loop;
    std::atomic<int> ran{0};
    bool delivered = false;
    {
        Worker w(loop);
        for (int i = 0; i < 3; ++i)
            w.submit([&]() -> std::function<void()> {
                ++ran;
                return [&] { delivered = true; };
            });
        w.waitIdle();
        BOOST_TEST(ran.load() == 3);
        BOOST_TEST(!delivered);
        w.submit([&]() -> std::function<void()> {
            std::this_thread::sleep_for(50ms);
            ++ran;
            return [&] { delivered = true; };
        });
        for (int i = 0; i < 5; ++i)
            w.submit([&]() -> std::function<void()> {
                ++ran;
                return {};
            });
    }
    loop.addTimer(EventLoop::Clock::now() + 100ms, [&] { loop.quit(); });
    loop.run();
    BOOST_TEST(!delivered);
    BOOST_TEST(ran.load() >= 3);
    BOOST_TEST(ran.load() <= 9);
}
