#pragma once
// Whether the running systemd can drive this node, decided once at the
// manager's start, before any task is recovered or started: a manager that
// cannot do its work stops with a message naming what is missing rather
// than leave a half-working node. Pure over the version string systemd
// reports (org.freedesktop.systemd1.Manager.Version) and the cgroup
// hierarchy, so the rules are unit-tested.

#include <optional>
#include <string>

#include "common/result.hpp"

namespace taskscope::manager {

/// The oldest systemd taskscope is proven on (Debian 12's 252).
inline constexpr int kOldestSystemd = 252;
/// The first systemd that no longer manages cgroup v1 (it refuses to boot
/// on the legacy and hybrid hierarchies unless forced, and then leaves
/// controllers unmanaged).
inline constexpr int kSystemdWithoutV1 = 256;
/// A systemd whose StartTransientUnit takes a scope's processes as pidfds
/// (the PIDFDs property, read in systemd v255's src/core/dbus-scope.c),
/// which cannot name a PID reused meanwhile.
inline constexpr int kSystemdWithPidfds = 255;

/// Whether systemd `version` takes PIDFDs (false when unreadable).
bool systemdTakesPidfds(const std::string& version);

/// The major version in "257.13-1~deb13u1", "252", "v255"; nullopt when
/// the string has none.
std::optional<int> systemdMajor(const std::string& version);

/// NotSupported, naming what is missing, when systemd `version` cannot run
/// taskscope on this node (`unified`: cgroup v2 at /sys/fs/cgroup). A
/// version that cannot be read passes: the calls themselves then tell.
common::Result<void> checkSystemdSupport(const std::string& version, bool unified);

}  // namespace taskscope::manager
