#define BOOST_TEST_MODULE stream_daemon_call_pool
#include <boost/test/unit_test.hpp>

#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "stream/daemon/call_pool.hpp"

using taskscope::stream::daemon::CallPool;

namespace {

struct FakeCall {
    explicit FakeCall(int& alive) : alive(alive) { ++alive; }
    ~FakeCall() { --alive; }
    bool busy() const { return inFlight; }
    int& alive;
    bool inFlight = false;
};

}  // namespace

BOOST_AUTO_TEST_CASE(an_idle_call_is_reused) {
    int alive = 0;
    CallPool<FakeCall> pool([&] { return std::make_unique<FakeCall>(alive); });
    auto* first = &pool.idle();
    BOOST_TEST(&pool.idle() == first);
    BOOST_TEST(alive == 1);
}

BOOST_AUTO_TEST_CASE(each_call_in_flight_has_its_own) {
    int alive = 0;
    CallPool<FakeCall> pool([&] { return std::make_unique<FakeCall>(alive); });
    std::vector<FakeCall*> calls;
    for (int i = 0; i < 10; ++i) {
        auto& c = pool.idle();
        for (auto* other : calls) BOOST_TEST(other != &c);
        c.inFlight = true;
        calls.push_back(&c);
    }
    BOOST_TEST(alive == 10);
    // A busy call is never taken, nor destroyed, even with many idle ones.
    for (int i = 1; i < 10; ++i) calls[i]->inFlight = false;
    auto& next = pool.idle();
    BOOST_TEST(&next != calls[0]);
    BOOST_TEST(calls[0]->inFlight);
}

BOOST_AUTO_TEST_CASE(idle_calls_beyond_a_few_are_let_go) {
    int alive = 0;
    CallPool<FakeCall> pool([&] { return std::make_unique<FakeCall>(alive); });
    std::vector<FakeCall*> calls;
    for (int i = 0; i < 100; ++i) {
        auto& c = pool.idle();
        c.inFlight = true;
        calls.push_back(&c);
    }
    for (auto* c : calls) c->inFlight = false;
    (void)pool.idle();
    BOOST_TEST(alive <= 5);
    BOOST_TEST(pool.size() == static_cast<size_t>(alive));
}

BOOST_AUTO_TEST_CASE(in_flight_from_start_until_the_continuation_returned) {
    using taskscope::stream::daemon::InFlight;
    InFlight<std::function<void(int)>> call;
    BOOST_TEST(!call.busy());
    int got = 0;
    bool busyInside = false;
    call.start([&](int v) { got = v, busyInside = call.busy(); }, [] {});
    BOOST_TEST(call.busy());
    call.finish(7);
    BOOST_TEST(got == 7);
    BOOST_TEST(busyInside);
    BOOST_TEST(!call.busy());
}

BOOST_AUTO_TEST_CASE(a_send_that_throws_leaves_the_call_idle) {
    using taskscope::stream::daemon::InFlight;
    InFlight<std::function<void()>> call;
    BOOST_CHECK_THROW(call.start([] {}, [] { throw std::runtime_error("bus gone"); }), std::runtime_error);
    BOOST_TEST(!call.busy());
}
