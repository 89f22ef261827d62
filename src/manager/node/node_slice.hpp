#pragma once
// The node's share kept from tasks (issue 48): what nomad.slice (the
// manager's `slice`, holding every task) is given so that a task that
// attacks the node (a fork bomb at its pids limit, a memory hog, a CPU
// spinner per core) cannot starve systemd, dbus-daemon, journald or the
// manager itself, which live in system.slice and init.scope:
//   CPUWeight  below system.slice's 100, so that under contention the
//              system services get twice the CPU of all tasks together;
//   TasksMax   the kernel's process limit less a reservation for the
//              system (kubelet's system-reserved pids), every task's own
//              pids limit counted inside it;
//   MemoryMax  the node's memory less a reservation for the system (as
//              Nomad's client `reserved { memory }` keeps it from tasks).
// Applied at every start of the manager through systemd
// (SetUnitProperties, runtime), so a changed config takes effect with a
// restart; node_slice_limits = false leaves the slice as the operator
// configured it.

#include <cstdint>
#include <string>

#include "scope/resources.hpp"

namespace taskscope::manager {

struct NodeSliceConfig {
    bool enabled = true;          ///< key node_slice_limits
    uint64_t cpuWeight = 50;      ///< key node_slice_cpu_weight (1..10000; systemd's default is 100)
    uint64_t reservedPids = 0;    ///< key system_reserved_pids; 0: the default below
    uint64_t reservedMemoryMb = 0;  ///< key system_reserved_memory_mb; 0: the default below
};

/// What the node has, read from /proc (kernel/pid_max, kernel/threads-max, meminfo).
struct NodeCapacity {
    uint64_t processLimit = 0;  ///< min(pid_max, threads-max): the kernel's cap on tasks
    uint64_t memoryBytes = 0;   ///< MemTotal
};

/// The system's pids when the config names none: a tenth of the kernel's
/// limit, at least 1024 (a Debian node's services and an operator's shell
/// run in a few hundred).
uint64_t defaultReservedPids(uint64_t processLimit);
/// The system's memory when the config names none: a tenth of the node's,
/// at least 256 MiB and at most 4 GiB (systemd, dbus-daemon, journald and
/// both taskscope daemons take tens of MiB; the rest is page cache the
/// system needs to stay responsive).
uint64_t defaultReservedMemoryBytes(uint64_t memoryBytes);

/// The slice's properties: none when disabled; a limit is left out when
/// the node's capacity is unknown or smaller than the reservation.
scope::UnitProperties nodeSliceProperties(const NodeSliceConfig& config, const NodeCapacity& node);

/// Reads the node's capacity from /proc.
NodeCapacity readNodeCapacity(const std::string& procRoot = "/proc");

/// One line for the journal: what the slice gets, e.g.
/// "CPUWeight=50 TasksMax=29491 MemoryMax=2147483648".
std::string describe(const scope::UnitProperties& properties);

}  // namespace taskscope::manager
