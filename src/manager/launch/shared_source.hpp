#pragma once
// A bidirectional volume (issue 14) sends the task's mounts to the host
// only when the host mount holding its source is shared: the task's bind
// is then a peer of it. systemd makes "/" and every mount below it shared
// at boot, so this is nearly always so; a source on a mount an operator
// made private gets a bind onto itself made shared, once, as kubelet does
// for its pods' bidirectional volumes. That bind is the node's, not the
// task's: it stays (later tasks share it), and leaves the private mount it
// sits on as it was.

#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace taskscope::manager {

struct HoldingMount {
    std::string mountPoint;
    bool shared = false;
};

/// The mount of a /proc/self/mountinfo text that holds `path` (absolute,
/// without symlinks): the longest mount point that is the path or one of
/// its parents, the last listed of a stack. Empty when the text has none.
std::optional<HoldingMount> holdingMount(std::string_view mountinfo, const std::string& path);

/// Makes sure the host mount holding `source` is shared (see above).
/// Errors are InvalidSpec for a source that does not resolve without
/// following a symlink, Internal
/// for a refused mount.
common::Result<void> ensureSharedSource(const std::string& source);

}  // namespace taskscope::manager
