#pragma once
// systemd's file descriptor store (FileDescriptorStoreMax=): what must
// outlive a daemon's crash or restart without a process of its own to
// hold it. The streamer keeps its exec sessions' pipes and terminals there;
// the log fifos are held by each task's shim instead, as systemd compares
// every stored fd with all the others (quadratic at 10,000 tasks). A
// manager before 0.2 stored its fifo holds here: the manager takes them
// back after an upgrade.

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
