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

/// Reads a small file of the daemon's own state without touching its
/// access time. With relatime, the first read of a file written since its
/// last read (a new exit record) dirties its inode, and the read waits for
/// the filesystem's journal: seconds while a drain's removals commit.
/// Falls back to a plain read where O_NOATIME is not allowed (a file
/// someone else owns, read without CAP_FOWNER).
Result<std::string> readStateFile(const std::string& path);

/// Reads a file relative to an open directory fd (cgroup trees are walked
/// through directory fds so that a path is resolved once).
Result<std::string> readFileAt(int dirFd, const std::string& name);

/// The daemons' state (task specs with their secrets, exit records, log
/// descriptions, logs): only root reads the files and enters the
/// directories, whatever the umask a task or an operator set.
inline constexpr unsigned kPrivateFileMode = 0600;

/// Writes all of `data` to `fd`; `what` names the file in the error.
Result<void> writeAll(int fd, const std::string& data, const std::string& what);
inline constexpr unsigned kPrivateDirMode = 0700;

/// How long a written file must last: through a power loss (fsync'd), or
/// only through a crash of the process that wrote it (the page cache is
/// enough, and the writer's loop does not wait for the disk).
enum class Durability { PowerLoss, ProcessCrash };

/// Replaces path with content atomically (and durably, by default); the
/// new file has `mode` (private by default: every caller writes daemon state).
Result<void> writeFileAtomic(const std::string& path, const std::string& content,
                             unsigned mode = kPrivateFileMode, Durability durability = Durability::PowerLoss);

/// mkdir -p with the given mode for created directories.
Result<void> makeDirs(const std::string& path, unsigned mode = 0755);

/// makeDirs, then `mode` on the last directory even when it existed: an
/// older version created it readable by everyone.
Result<void> makePrivateDir(const std::string& path, unsigned mode = kPrivateDirMode);

/// Takes every permission beyond `mode` away from the regular files
/// directly in `dir` (files an older version wrote readable by everyone).
Result<void> restrictFiles(const std::string& dir, unsigned mode = kPrivateFileMode);

/// Writes one byte into the fifo at `path` if someone has it open for
/// reading, never waiting: true when it was written. Wakes a task's shim
/// that holds the task's log fifos (manager/records/log_spool.hpp).
bool pokeFifo(const std::string& path);

}  // namespace taskscope::common
