#pragma once
// A task's resource limits as a spec states them (Nomad's units: MB,
// shares, percent). scope/resources.hpp turns them into unit properties.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace taskscope::spec {

/// cgroup v1's cpu.shares, in which a spec (as Nomad) states CPU shares:
/// the kernel's range and default.
inline constexpr uint64_t kCpuSharesMin = 2;
inline constexpr uint64_t kCpuSharesMax = 262144;
inline constexpr uint64_t kCpuSharesDefault = 1024;

/// systemd's IOWeight= range (cgroup v2's io.weight).
inline constexpr uint64_t kIoWeightMin = 1;
inline constexpr uint64_t kIoWeightMax = 10000;

/// Per-device IO limits: a block device node (its path under /dev) to
/// bytes or operations per second.
using IoDeviceLimits = std::map<std::string, uint64_t>;
/// At most this many devices in each of a spec's IO maps.
inline constexpr size_t kMaxIoDevices = 16;
/// The largest rate a spec holds: its JSON reads a rate as a positive
/// int64 (a larger one comes back as InvalidSpec).
inline constexpr uint64_t kMaxIoRate = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

struct Resources {
    std::optional<int64_t> memoryMb;          ///< reservation; the hard limit unless memoryMaxMb is set
    std::optional<int64_t> memoryMaxMb;       ///< hard limit for oversubscription; -1 = none
    std::optional<uint64_t> cpuShares;        ///< kCpuSharesMin..kCpuSharesMax, Nomad/cgroup v1 shares
    std::optional<uint64_t> cpuQuotaPercent;  ///< percent of one CPU, 100 = one full core
    std::optional<uint64_t> pidsMax;
    std::optional<uint32_t> cores;  ///< cores to reserve exclusively
    /// These cores, reserved exclusively (a scheduler that already chose
    /// them, as Nomad does); exclusive with `cores`.
    std::set<unsigned> cpuset;
    /// Disk IO (issue 47): systemd's IOWeight= and IO{Read,Write}{Bandwidth,IOPS}Max=.
    std::optional<uint64_t> ioWeight;
    IoDeviceLimits ioReadBps;
    IoDeviceLimits ioWriteBps;
    IoDeviceLimits ioReadIops;
    IoDeviceLimits ioWriteIops;
    /// Not part of a spec: the cpuset the partitioner assigned; empty = unset.
    std::set<unsigned> allowedCpus;

    bool hasIo() const {
        return ioWeight || !ioReadBps.empty() || !ioWriteBps.empty() || !ioReadIops.empty() || !ioWriteIops.empty();
    }
    bool operator==(const Resources&) const = default;
};

/// Parses a resources object alone (UpdateTask's argument): InvalidSpec.
common::Result<Resources> parseResources(std::string_view json);

/// `change` laid over `base`: every limit `change` sets replaces base's;
/// a memory_mb without memory_max_mb drops an old memory_max_mb (the task
/// no longer oversubscribes). What UpdateTask keeps of a task's spec.
Resources merged(const Resources& base, const Resources& change);

}  // namespace taskscope::spec
