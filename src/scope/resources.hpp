#pragma once
// A task's resource limits and how they become systemd unit properties.

#include <sdbus-c++/Types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace taskscope::scope {

/// Limits as a job spec states them (Nomad's units: MB, shares, percent).
struct Resources {
    std::optional<int64_t> memoryMb;     ///< reservation; the hard limit unless memoryMaxMb is set
    std::optional<int64_t> memoryMaxMb;  ///< hard limit for oversubscription; -1 = none
    std::optional<uint64_t> cpuShares;   ///< 2..262144, Nomad/cgroup v1 shares
    std::optional<uint64_t> cpuQuotaPercent;  ///< percent of one CPU, 100 = one full core
    std::optional<uint64_t> pidsMax;
    std::optional<uint32_t> cores;     ///< cores to reserve exclusively
    /// These cores, reserved exclusively (a scheduler that already chose
    /// them, as Nomad does); exclusive with `cores`.
    std::set<unsigned> cpuset;
    std::set<unsigned> allowedCpus;    ///< the cpuset assigned by the partitioner; empty = unset
};

using UnitProperty = sdbus::Struct<std::string, sdbus::Variant>;
using UnitProperties = std::vector<UnitProperty>;

/// runc's conversion of cgroup v1 shares [2, 262144] to v2 weight
/// [1, 10000], so a spec means the same on either hierarchy.
uint64_t cpuWeightFromShares(uint64_t shares);

/// AllowedCPUs= wants a little-endian CPU bitmask as bytes.
std::vector<uint8_t> cpuMask(const std::set<unsigned>& cpus);

/// The unit properties for the limits, from a table of
/// (systemd property, appender); unset limits produce no property.
UnitProperties resourceProperties(const Resources& resources);

}  // namespace taskscope::scope
