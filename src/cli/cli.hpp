#pragma once
// What every taskscopectl command shares: how it fails, how it reaches the
// bus, how it writes. Each command family lives in its own file
// (main.cpp: the manager's task commands, with manager_client.hpp;
// alloc_command.cpp; logs_command.cpp; exec_command.cpp; stats_command.cpp).

#include <sdbus-c++/sdbus-c++.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace taskscope::cli {

/// Prints "taskscopectl: MESSAGE" to stderr and exits with `code`.
[[noreturn]] void die(const std::string& message, int code = 1);

/// The system bus, or the bus in TASKSCOPE_BUS_ADDRESS (tests).
std::unique_ptr<sdbus::IConnection> connect();

/// Writes all of data to fd, retrying on EINTR; dies on any other error.
void writeAll(int fd, const char* data, size_t len);

/// Errors that say the streamer went away (or is not back yet), not that
/// the request was wrong: worth asking again once it is back.
bool streamerGone(const sdbus::Error& e);

/// Dispatches the connection's incoming messages until done() is true.
/// Signals reach their proxies from here; the CLI has no other loop.
void pumpUntil(sdbus::IConnection& conn, const std::function<bool()>& done);

/// taskscopectl logs ARGS... (logs_command.cpp); returns the exit code.
int logsCommand(sdbus::IConnection& conn, const std::vector<std::string>& args);

/// taskscopectl exec ARGS... (exec_command.cpp); returns the exit code.
int execCommand(sdbus::IConnection& conn, const std::vector<std::string>& args);

/// taskscopectl alloc ARGS... (alloc_command.cpp): an allocation addressed
/// by its ID alone; json is the global --json. Returns the exit code.
int allocCommand(sdbus::IConnection& conn, const std::vector<std::string>& args, bool json);

}  // namespace taskscope::cli
