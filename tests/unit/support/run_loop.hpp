#pragma once
// Runs a test's event loop in short turns until a condition holds, or 5 s.

#include <chrono>

#include "common/event_loop.hpp"

namespace taskscope::test {

template <class F>
bool runUntil(common::EventLoop& loop, F done) {
    using namespace std::chrono_literals;
    const auto deadline = common::EventLoop::Clock::now() + 5s;
    while (!done()) {
        if (common::EventLoop::Clock::now() >= deadline) return false;
        loop.addTimer(common::EventLoop::Clock::now() + 5ms, [&] { loop.quit(); });
        loop.run();
    }
    return true;
}

}  // namespace taskscope::test
