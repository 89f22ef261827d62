#pragma once
// Small file helpers shared by the daemons: whole-file reads and the
// write-temp, fsync, rename, fsync-directory dance that makes state
// survive a crash at any instant.

#include <string>
#include <string_view>

#include "common/result.hpp"

namespace taskscope::common {

/// Strips surrounding whitespace, such as the newline ending a sysfs file.
std::string_view trim(std::string_view text);

/// Reads a whole (small) file, such as a cgroup or /proc attribute.
Result<std::string> readFile(const std::string& path);

/// Reads a file relative to an open directory fd (cgroup trees are walked
/// through directory fds so that a path is resolved once).
Result<std::string> readFileAt(int dirFd, const std::string& name);

/// Replaces path with content atomically and durably.
Result<void> writeFileAtomic(const std::string& path, const std::string& content);

/// mkdir -p with the given mode for created directories.
Result<void> makeDirs(const std::string& path, unsigned mode = 0755);

}  // namespace taskscope::common
