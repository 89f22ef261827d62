#pragma once
// What taskscope knows of the node's cgroup tree, in one place: which
// version it is (one detection), where a process is (one reader of
// /proc/<pid>/cgroup), where a cgroup's files are (by CgroupPath, never by
// a string that could climb out of the tree), and where every hierarchy is
// mounted. A task's cgroup itself is asked of systemd or read from /proc
// once, never derived from names. Pure, or one read; nothing here logs.
//
// Reads of /proc/<pid>/cgroup and of cgroup files, and writes to them, wait
// behind the kernel's cgroup lock, which a fork bomb or PID 1's own work
// can hold for seconds: a daemon's loop calls none of them, its workers do.

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace taskscope::scope {

inline constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

/// The cgroup layout. Hybrid hosts (cgroup2 only at /sys/fs/cgroup/unified)
/// are V1: only a cgroup2 mount at the root is V2.
enum class CgroupVersion { V1, V2 };

const char* toString(CgroupVersion version);

/// The version a root mount of filesystem type `fsType` makes ("cgroup2":
/// V2), for a caller that has the mount table (the fingerprint).
CgroupVersion versionOfRootMount(std::string_view fsType);
/// The one detection from the running system: V2 when `root` is a cgroup2 mount.
CgroupVersion detectCgroupVersion(const std::string& root = kCgroupRoot);

/// Where cgroupfs is and which version it is. Unit tests point the root at
/// a directory of their own and choose the version, so a test on a cgroup
/// v2 host never writes the host's files.
struct CgroupHost {
    std::string root = kCgroupRoot;
    CgroupVersion version = CgroupVersion::V2;

    static CgroupHost detect(std::string root = kCgroupRoot);
    bool unified() const { return version == CgroupVersion::V2; }

    /// <root>[/<hierarchy>]<cgroup>/<file>, for a cgroup as a task record
    /// or systemd's ControlGroup has it; nullopt when it is not a valid
    /// path below the root (CgroupPath). "/" (a process left in the root
    /// cgroup, as on a host whose init is not systemd) names the root's own.
    std::optional<std::string> file(const std::string& cgroup, std::string_view hierarchy, std::string_view name) const;
    /// The cgroup.procs a task's processes are tracked in: the unified
    /// hierarchy's, or systemd's own hierarchy on v1.
    std::optional<std::string> processesFile(const std::string& cgroup) const;
    /// The cgroup.events whose change says when the cgroup's `populated`
    /// changes (a file modified event, cgroup-v2.rst): v2 only, nullopt on
    /// v1, which has no such file.
    std::optional<std::string> eventsFile(const std::string& cgroup) const;
    /// Whether the node's cgroups have the controller: named in the root's
    /// cgroup.controllers on v2 (`v2Name`), a hierarchy of its own on v1
    /// (`v1Name`: "blkio" for "io").
    bool hasController(std::string_view v2Name, std::string_view v1Name) const;
};

/// Calls `line(controllers, path)` for each "ID:CONTROLLERS:PATH" line of a
/// /proc/<pid>/cgroup text (the path may hold ':' itself); malformed lines
/// are skipped. Stops early when `line` returns true; says whether it did.
bool forEachProcCgroupLine(std::string_view text,
                           const std::function<bool(std::string_view controllers, std::string_view path)>& line);
/// The cgroup /proc/<pid>/cgroup's text has the process in: the unified
/// line ("0::") on v2, systemd's hierarchy ("name=systemd") on v1; "" when
/// neither is there.
std::string cgroupOfProcText(std::string_view text);
/// The same for a process: reads /proc/<pid>/cgroup (a worker's call). ""
/// when it cannot be read (the process is gone).
std::string processCgroup(pid_t pid, const std::string& proc = "/proc");
/// `cgroup` is `ancestor` or below it.
bool cgroupIsWithin(std::string_view cgroup, std::string_view ancestor);

/// The cgroup.procs file of the cgroup `relPath` (as systemd's ControlGroup
/// names it) in every cgroup hierarchy mounted per `mountinfo`
/// (/proc/self/mountinfo's text): one on v2, one per hierarchy on v1 and
/// hybrid. Existence is not checked.
std::vector<std::string> cgroupProcsFiles(std::string_view mountinfo, const std::string& relPath);
/// The same for this process's own mount table (/proc/self/mountinfo),
/// those it may write only: where a process of ours is moved into the
/// cgroup on every hierarchy (the shims' home). Empty when none.
common::Result<std::vector<std::string>> writableProcsFiles(const std::string& relPath);

/// Whether the cgroup's processes file lists a process (a read of a
/// cgroup file: a worker's call). False when it cannot be read.
bool cgroupHasProcesses(const std::string& procsFile);

}  // namespace taskscope::scope
