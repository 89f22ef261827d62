#pragma once
// A task's CPU use in MHz, the unit Nomad schedules and shows CPU in
// (TaskStats' cpu.total_ticks: `nomad alloc status` shows it as "used/asked
// MHz", `nomad node status` sums it per node, the client publishes it as
// client.allocs.cpu.total_ticks). Nomad's executor computes it from the
// task's CPU percent and the node's compute (drivers/shared/executor:
// procstats/procstats.go Aggregate and executor_linux_cgo.go handleStats
// both call cpustats.Tracker.TicksConsumed, client/lib/cpustats/stats.go):
//   total_ticks = percent / 100 * TotalCompute / NumCores
// where percent is of one core (100 = one core busy), TotalCompute the
// node's MHz over all cores and NumCores their number
// (client/lib/numalib/topology.go Compute). Pure, but for hostCompute.

#include <string>

#include "base.pb.h"

namespace taskscope::nomad {

struct Compute {
    double totalMhz = 0;  ///< all cores together
    int cores = 0;
    bool known() const { return totalMhz > 0 && cores > 0; }
};

/// Nomad's Topology.Compute: override_total_compute when set (the client's
/// cpu_total_compute), else the sum of each core's speed (base_speed, else
/// max_speed, else guess_speed: numalib Core.MHz); cores counts every core,
/// disabled ones too (NumCores). Not known for an empty topology.
Compute computeFromTopology(const hashicorp::nomad::plugins::base::proto::ClientTopology& topology);

/// The same from this host, for a driver that got no topology (a Nomad
/// older than its Topology field, or SetConfig at config validation): per
/// online CPU the base frequency (acpi_cppc/nominal_freq under the
/// acpi-cpufreq driver, else cpufreq/base_frequency), else
/// cpufreq/cpuinfo_max_freq, as Nomad's sysfs scan does
/// (client/lib/numalib/detect_linux.go discoverCoreSpeeds); when that
/// leaves the total at 0 (no cpufreq, as in a VM), every CPU counts the
/// first processor's "cpu MHz" of /proc/cpuinfo, as Nomad's Fallback scan
/// does (detect_linux.go Fallback, detect_generic.go scanGeneric). `sys` is
/// /sys/devices/system/cpu, `cpuinfo` /proc/cpuinfo (tests pass fixtures).
Compute hostCompute(const std::string& sys = "/sys/devices/system/cpu", const std::string& cpuinfo = "/proc/cpuinfo");

/// cpustats.Tracker.TicksConsumed: 0 when the compute is not known.
double ticksConsumed(double percent, const Compute& compute);

}  // namespace taskscope::nomad
