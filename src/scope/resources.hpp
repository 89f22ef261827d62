#pragma once
// How a task's resource limits become systemd unit properties.

#include <sdbus-c++/Types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "spec/resources.hpp"

namespace taskscope::scope {

/// A spec's limits (spec/resources.hpp), here where they become properties.
using Resources = spec::Resources;

using UnitProperty = sdbus::Struct<std::string, sdbus::Variant>;
using UnitProperties = std::vector<UnitProperty>;

/// runc's conversion of cgroup v1 shares [2, 262144] to v2 weight
/// [1, 10000], so a spec means the same on either hierarchy.
uint64_t cpuWeightFromShares(uint64_t shares);

/// AllowedCPUs= wants a little-endian CPU bitmask as bytes.
std::vector<uint8_t> cpuMask(const std::set<unsigned>& cpus);

/// What taskscope sets on a slice it makes (manager/node/slice_ledger.hpp),
/// or moves onto a scope: a weight among siblings, computed from the sums
/// below it (not from shares), and the cores of the shared pool.
struct SliceResources {
    std::optional<uint64_t> cpuWeight;
    /// Present: AllowedCPUs, even an empty mask (the caller decides).
    std::optional<std::set<unsigned>> allowedCpus;
};

/// The unit properties for the limits, from a table of
/// (systemd property, appender); unset limits produce no property.
UnitProperties resourceProperties(const Resources& resources);
/// The same table's properties for a slice: one name, one encoding for
/// both kinds of unit (accounting is addAccountingProperties()').
UnitProperties sliceProperties(const SliceResources& resources);
/// The accounting every unit taskscope makes turns on, so that its
/// counters can be read (stats, GetTask, `systemctl status`): memory and
/// tasks, and CPU where `cpu` (systemd leaves CPU accounting off by
/// default; the shims' home has no reader of its CPU time). One place for
/// the task scopes, the allocations' slices and the shims' home alike.
void addAccountingProperties(UnitProperties& properties, bool cpu = true);

/// `properties` without CPUWeight: a task alone in its allocation leaves its
/// weight to the allocation's slice (manager/node/allocation_slices.hpp).
void dropCpuWeight(UnitProperties& properties);

}  // namespace taskscope::scope
