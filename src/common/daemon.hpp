#pragma once
// Plumbing both daemons share: how they connect to their bus and how
// SIGTERM/SIGINT end their event loop.

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
void quitOnTermination(EventLoop& loop);

}  // namespace taskscope::common
