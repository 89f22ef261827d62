#pragma once
// Plumbing both daemons share: how they connect to their bus and how
// SIGTERM/SIGINT end their event loop.

#include <functional>
#include <memory>
#include <string>

#include "common/event_loop.hpp"

namespace sdbus {
class IConnection;
}

namespace taskscope::common {

/// The system bus, or the bus at `address` when one is given (tests).
std::unique_ptr<sdbus::IConnection> connectBus(const std::string& address);

/// Blocks SIGTERM and SIGINT and ends `loop` cleanly when one arrives.
/// With `drainFirst`, the first signal calls it instead, and it returns
/// true when it quits the loop itself once its work is done; a second
/// signal quits at once. Call before any thread starts: the signals must
/// be blocked in every thread, which inherit the mask.
void quitOnTermination(EventLoop& loop, std::function<bool()> drainFirst = {});

}  // namespace taskscope::common
