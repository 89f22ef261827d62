#pragma once
// An allocation's network namespace as iproute2 keeps one: a file under
// /run/netns bind-mounted from the namespace, so it outlives the process
// that made it (and the manager) and `ip netns` lists it.

#include <string>

#include "common/result.hpp"

namespace taskscope::network {

/// Makes `dir/name` a new network namespace with its loopback up. The
/// namespace is made by a short-lived child (unshare, then bind mount of
/// its /proc/self/ns/net), so no thread of the caller ever changes
/// namespace. NetworkExists when the file is there already.
common::Result<void> createNetns(const std::string& dir, const std::string& name);

/// Unmounts and removes `path`; a missing one is fine.
common::Result<void> removeNetns(const std::string& path);

/// `path` is a mounted network namespace (nsfs), not a plain file.
bool isNetns(const std::string& path);

}  // namespace taskscope::network
