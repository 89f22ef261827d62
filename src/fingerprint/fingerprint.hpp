#pragma once
// Node facts the scheduler places work by: which cgroup regime the node runs,
// what it can control, how many cores and how much memory it has. Probing is
// plain file reading under configurable /sys and /proc roots so that tests
// run it against fake trees in tests/fixtures/fingerprint.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "scope/cgroup_host.hpp"

namespace taskscope::fingerprint {

using common::Result;

/// Where sysfs and procfs are. Paths read from the mount table (which name
/// the real /sys) are rebased onto `sys`.
struct Roots {
    std::string sys = "/sys";
    std::string proc = "/proc";
};

/// What the caller knows that the files do not.
struct ProbeOptions {
    /// Cores kept for the system (agent config); they are usable but not
    /// reservable by tasks.
    std::set<unsigned> reservedForSystem;
};

/// The cgroup regime (scope/cgroup_host.hpp's one rule): hybrid (cgroup2
/// only at /sys/fs/cgroup/unified) is V1, as in Nomad.
using scope::CgroupVersion;

/// The facts probe() found.
struct Facts {
    CgroupVersion cgroupVersion = CgroupVersion::V1;
    /// "/sys/fs/cgroup" on v2; on v1 the directory holding the hierarchies.
    /// Empty when no cgroup hierarchy is mounted at all.
    std::string cgroupMountPoint;
    /// v2: the root's cgroup.controllers; v1: the mounted hierarchies.
    std::set<std::string> controllers;
    /// Tasks can be frozen (v2: cgroup.freeze in non-root cgroups; v1: the
    /// freezer hierarchy is mounted).
    bool freezer = false;
    /// Tasks can be pinned to cores through cpusets.
    bool cpuset = false;

    std::set<unsigned> presentCpus;
    std::set<unsigned> onlineCpus;
    /// Online CPUs in the root cpuset: what tasks may run on at all.
    std::set<unsigned> usableCpus;
    /// usableCpus minus the cores reserved for the system.
    std::set<unsigned> reservableCpus;
    /// Sum of the usable cores' maximum frequencies, in MHz.
    std::uint64_t totalComputeMhz = 0;

    std::uint64_t memoryTotalBytes = 0;
    std::string kernelVersion;

    /// Things a person should know that did not stop the probe ("no cgroup
    /// hierarchy mounted", "no frequency known for CPU 3"). The caller
    /// decides whether to log them.
    std::vector<std::string> notes;
};

/// Reads the node's facts below `roots`. Fails (with context) only when a
/// file every Linux system has is missing or malformed: the mount table,
/// cpu/present, cpu/online, meminfo, kernel/osrelease, and on v2 the root's
/// cgroup.controllers.
Result<Facts> probe(const Roots& roots, const ProbeOptions& options = {});

/// The facts as Nomad-style node attributes: a flat JSON object whose values
/// are all strings. "systemd.version" is left out when `systemdVersion` is
/// empty (systemd could not be asked).
nlohmann::json toJson(const Facts& facts, const std::string& systemdVersion);

}  // namespace taskscope::fingerprint
