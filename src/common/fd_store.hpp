#pragma once
// systemd's file descriptor store (FileDescriptorStoreMax=): the fifo ends
// the streamer and the manager hold survive their crashes or restarts
// there, so a pipe's contents are never dropped (a pipe's data lives only
// while someone holds it) and a task's writes only wait.

#include <map>
#include <string>

#include "common/result.hpp"
#include "common/unique_fd.hpp"

namespace taskscope::common {

/// Hands a duplicate of fd to the service manager under name (no-op when
/// not run by systemd).
common::Result<void> storeFd(int fd, const std::string& name);
/// Drops every stored fd called name.
void unstoreFd(const std::string& name);
/// The fds passed at start (LISTEN_FDS / LISTEN_FDNAMES), by name; a name
/// seen twice keeps the first fd.
std::map<std::string, common::UniqueFd> takeStoredFds();

}  // namespace taskscope::common
