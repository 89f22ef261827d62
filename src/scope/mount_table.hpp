#pragma once
// The kernel's mount tables read once, for every part of taskscope that
// asks which mount holds a path or where a filesystem is mounted:
// /proc/<pid>/mountinfo (proc(5): "ID PARENT MAJ:MIN ROOT MOUNT-POINT
// OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER-OPTIONS") and the older
// /proc/mounts ("SOURCE MOUNT-POINT FSTYPE OPTIONS DUMP PASS"), which
// minimal roots and test fixtures may have alone. The kernel escapes space,
// tab, newline and backslash in a field as \ooo; the entries hold the
// fields as they are meant.

#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace taskscope::scope {

struct MountEntry {
    std::string root;        ///< mountinfo only: the mount's root within its filesystem ("/" for the whole)
    std::string mountPoint;
    std::string fsType;
    std::string source;
    std::vector<std::string> options;   ///< the mount's own (rw, nosuid, ...)
    std::vector<std::string> optional;  ///< mountinfo only: "shared:N", "master:N", ...
    std::vector<std::string> superOptions;  ///< mountinfo only: the filesystem's (for cgroup v1: its controllers)

    bool hasOption(std::string_view option) const;
    /// A peer group member: its mounts and unmounts propagate to its peers.
    bool shared() const;
};

/// Undoes the kernel's \ooo escapes of a mount-table field.
std::string unescapeMountField(std::string_view field);

/// The entries of a mountinfo text, in its order; a line that does not
/// have the format is an error naming `path` and the line's number, or,
/// with `skipMalformed`, is passed over (a reader that looks for one kind
/// of mount does not lose the others to a line it cannot read).
common::Result<std::vector<MountEntry>> parseMountInfo(std::string_view text, const std::string& path,
                                                       bool skipMalformed = false);
/// The entries of a /proc/mounts text (its options are also the
/// filesystem's: that format does not tell them apart).
common::Result<std::vector<MountEntry>> parseMounts(std::string_view text, const std::string& path);

/// The calling process's own mount table, read whole: the one read of
/// /proc/self/mountinfo (for the cgroup mounts and a volume's holding mount).
common::Result<std::string> readOwnMountInfo();

/// The entry whose mount point holds `path` (absolute, without symlinks):
/// the longest mount point that is the path or one of its parents, the
/// last listed of a stack; null when none does.
const MountEntry* holdingMount(const std::vector<MountEntry>& mounts, const std::string& path);

}  // namespace taskscope::scope
