#define BOOST_TEST_MODULE stop_pacer
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "manager/node/stop_pacer.hpp"
#include "support/run_loop.hpp"

using namespace taskscope;
using taskscope::test::runUntil;
using namespace std::chrono_literals;
using common::EventLoop;
using manager::StopPacer;

namespace {

/// A pacer whose round trips wait until the test answers them.
struct Fixture {
    std::vector<std::string> admitted;
    std::vector<std::function<void()>> trips;  ///< unanswered, in order sent
    StopPacer pacer;

    explicit Fixture(size_t window, EventLoop* loop = nullptr, std::chrono::milliseconds slow = 1000ms)
        : pacer(window, slow, loop, [this](const std::string& unit) { admitted.push_back(unit); },
                [this](std::function<void()> answered) { trips.push_back(std::move(answered)); }) {}

    void answerTrip() {
        BOOST_REQUIRE(!trips.empty());
        auto t = std::move(trips.front());
        trips.erase(trips.begin());
        t();
    }
};

}  // namespace

BOOST_AUTO_TEST_CASE(stops_within_the_window_are_sent_at_once) {
    Fixture f(2);
    f.pacer.request("a.scope", false);
    f.pacer.request("b.scope", false);
    BOOST_TEST(f.admitted == (std::vector<std::string>{"a.scope", "b.scope"}), boost::test_tools::per_element());
    BOOST_TEST(f.pacer.inFlight() == 2u);
    BOOST_TEST(f.pacer.queueLength() == 0u);
}

BOOST_AUTO_TEST_CASE(a_place_frees_once_systemd_has_run_a_job_since_the_end) {
    Fixture f(2);
    for (auto u : {"a.scope", "b.scope", "c.scope", "d.scope"}) f.pacer.request(u, false);
    BOOST_TEST(f.admitted.size() == 2u);
    BOOST_TEST(f.pacer.queued("c.scope"));

    // Ended: its cgroup is in systemd's queue, not collected yet.
    f.pacer.ended("a.scope");
    BOOST_TEST(f.admitted.size() == 2u);
    BOOST_REQUIRE(f.trips.size() == 1u);
    // One round trip at a time: b's end waits for the next one.
    f.pacer.ended("b.scope");
    BOOST_TEST(f.trips.size() == 1u);

    f.answerTrip();  // sent after a ended, before b did
    BOOST_TEST(f.admitted == (std::vector<std::string>{"a.scope", "b.scope", "c.scope"}),
               boost::test_tools::per_element());
    BOOST_REQUIRE(f.trips.size() == 1u);  // for b
    f.answerTrip();
    BOOST_TEST(f.admitted.size() == 4u);
    BOOST_TEST(f.trips.empty());
    BOOST_TEST(f.pacer.inFlight() == 2u);
}

BOOST_AUTO_TEST_CASE(a_kill_without_grace_goes_ahead_and_a_second_ask_keeps_its_place) {
    Fixture f(1);
    f.pacer.request("a.scope", false);
    f.pacer.request("b.scope", false);
    f.pacer.request("c.scope", false);
    f.pacer.request("b.scope", false);  // again: still second
    f.pacer.request("k.scope", true);
    f.pacer.ended("a.scope");
    f.answerTrip();
    BOOST_TEST(f.admitted.back() == "k.scope");
    f.pacer.ended("k.scope");
    f.answerTrip();
    BOOST_TEST(f.admitted.back() == "b.scope");
}

BOOST_AUTO_TEST_CASE(a_task_that_ends_while_it_waits_leaves_the_queue) {
    Fixture f(1);
    f.pacer.request("a.scope", false);
    f.pacer.request("b.scope", false);
    f.pacer.request("c.scope", false);
    f.pacer.ended("b.scope");  // ended by itself
    BOOST_TEST(!f.pacer.queued("b.scope"));
    BOOST_TEST(f.trips.empty());  // it held no place
    f.pacer.ended("a.scope");
    f.answerTrip();
    BOOST_TEST(f.admitted == (std::vector<std::string>{"a.scope", "c.scope"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_stop_under_way_asked_again_is_sent_again_at_once) {
    Fixture f(1);
    f.pacer.request("a.scope", false);
    f.pacer.request("b.scope", false);
    f.pacer.request("a.scope", true);
    BOOST_TEST(f.admitted == (std::vector<std::string>{"a.scope", "a.scope"}), boost::test_tools::per_element());
    BOOST_TEST(f.pacer.queued("b.scope"));
}

BOOST_AUTO_TEST_CASE(window_zero_sends_every_stop_at_once) {
    Fixture f(0);
    for (int i = 0; i < 100; ++i) f.pacer.request("t" + std::to_string(i) + ".scope", false);
    BOOST_TEST(f.admitted.size() == 100u);
    f.pacer.ended("t0.scope");
    BOOST_TEST(f.trips.empty());
}

BOOST_AUTO_TEST_CASE(a_task_shutting_down_slowly_frees_its_place) {
    // A graceful shutdown longer than slowAfter must not hold the others'
    // signals back for its whole grace: once PID 1 has answered a round
    // trip sent after it was found slow, its place is free.
    EventLoop loop;
    Fixture f(1, &loop, 20ms);
    f.pacer.request("slow.scope", false);
    f.pacer.request("b.scope", false);
    BOOST_TEST(f.admitted.size() == 1u);
    BOOST_REQUIRE(runUntil(loop, [&] { return f.trips.size() == 1u; }));
    BOOST_TEST(f.admitted.size() == 1u);
    f.answerTrip();
    BOOST_TEST(f.admitted.back() == "b.scope");
    // Its end, later, holds nothing: no round trip is owed for it.
    f.pacer.ended("slow.scope");
    BOOST_TEST(f.trips.empty());
    BOOST_TEST(f.pacer.inFlight() == 1u);
}

BOOST_AUTO_TEST_CASE(a_task_slow_while_systemd_answers_nothing_keeps_its_place) {
    // A task looks slow as well when its end is late to reach the manager
    // while PID 1 is collecting scopes: time alone frees no place, or a
    // drain signals on while PID 1 reads no call.
    EventLoop loop;
    Fixture f(2, &loop, 10ms);
    for (auto u : {"a.scope", "b.scope", "c.scope", "d.scope"}) f.pacer.request(u, false);
    BOOST_REQUIRE(runUntil(loop, [&] { return f.trips.size() == 1u; }));
    // Both found slow, the trip not answered: the window stays full however
    // long it takes.
    const auto until = EventLoop::Clock::now() + 60ms;
    runUntil(loop, [&] { return EventLoop::Clock::now() > until; });
    BOOST_TEST(f.admitted.size() == 2u);
    BOOST_TEST(f.pacer.inFlight() == 2u);
    BOOST_TEST(f.trips.size() == 1u);
    // The trip frees the one found slow before it was sent; the other, found
    // slow while it was under way, waits for the next.
    f.answerTrip();
    BOOST_TEST(f.admitted.size() == 3u);
    BOOST_REQUIRE(f.trips.size() == 1u);
    f.answerTrip();
    BOOST_TEST(f.admitted == (std::vector<std::string>{"a.scope", "b.scope", "c.scope", "d.scope"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_slow_task_that_ends_before_its_trip_is_owed_one_after_its_end) {
    EventLoop loop;
    Fixture f(1, &loop, 10ms);
    f.pacer.request("a.scope", false);
    f.pacer.request("b.scope", false);
    BOOST_REQUIRE(runUntil(loop, [&] { return f.trips.size() == 1u; }));
    // Its end reached the manager late: the scope it emptied is in PID 1's
    // queue after the trip under way.
    f.pacer.ended("a.scope");
    f.answerTrip();
    BOOST_TEST(f.admitted.size() == 1u);
    BOOST_REQUIRE(f.trips.size() == 1u);
    f.answerTrip();
    BOOST_TEST(f.admitted.back() == "b.scope");
}
