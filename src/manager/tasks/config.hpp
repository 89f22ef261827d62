#pragma once
// What the manager is configured with: the values its task room works by.
// Where they come from (manager.json and its drop-ins, each key's name and
// bounds) is daemon/config_file.hpp's.

#include <chrono>
#include <cstdint>
#include <set>
#include <string>

#include "manager/launch/isolation.hpp"
#include "manager/node/node_slice.hpp"
#include "network/cni_config.hpp"

namespace taskscope::manager {

/// The dangling-scope reconciler (config keys dangling_scopes_*).
struct ReconcilerConfig {
    bool enabled = true;
    bool dryRun = false;  ///< report dangling scopes, stop none
    std::chrono::milliseconds period = std::chrono::minutes(5);
    std::chrono::milliseconds creationGrace = std::chrono::minutes(5);
};

/// A node's default per-task process limit: room for a JVM's or a build's
/// thousands of threads, small enough that one fork bomb cannot take the
/// node's process table or its CPUs from everyone else.
constexpr uint64_t kDefaultPidsMax = 4096;

struct Config {
    std::string slice = "nomad.slice";
    /// New tasks go in the nested layout below `slice` (issue 31,
    /// scope/slice_layout.hpp); false starts them flat in `slice`, as a
    /// manager before it did (key nested_slices). Tasks already running
    /// stay where they are either way.
    bool nestedSlices = true;
    /// Bucket slices below the share slice (key bucket_fanout, 1..256): a
    /// stable hash of the allocation id picks one. 64 keeps every slice of
    /// a 10,000-task node of one-task allocations near 150 members
    /// (bench/README.md). A change moves new allocations only.
    unsigned bucketFanout = 64;
    /// Scopes an allocation's slice holds directly (key scopes_per_slice,
    /// 1..10000); a larger allocation's further tasks go to overflow
    /// slices inside it, as many each. It bounds the members of every
    /// slice, also for one allocation of 10,000 tasks (bench/README.md).
    unsigned scopesPerSlice = 100;
    /// The least time between two CPUWeight calls for one slice (key
    /// slice_weight_interval_ms, 0..3600000): what a slice's tasks get of
    /// the CPU lags its allocations by at most this; each call costs PID 1
    /// an apply of the slice's CPU settings (allocation_slices.hpp).
    std::chrono::milliseconds sliceWeightInterval{1000};
    /// The least time between two CPUWeight calls for any slices (key
    /// slice_weight_node_interval_ms, 0..60000; 0: per slice only): under
    /// a fill the buckets' weights together cost at most one apply of a
    /// slice's CPU settings per this, the furthest off first.
    std::chrono::milliseconds sliceWeightNodeInterval{250};
    /// StopTask signals in flight at once (key stop_window, 0..100000; 0:
    /// no limit): the others wait until systemd has collected what the
    /// earlier ones ended (stop_pacer.hpp). 64 by default: in a 3,000-task
    /// drain in the test bed, once the manager's own writes no longer held
    /// starts back, 64 cut a new start's worst wait from 24.6 s to 9.7 s
    /// (p90 19.9 s to 6.0 s) and the drain took as long as with every stop
    /// at once; 16 kept the p90 at 0.66 s but made the drain 35% longer
    /// (bench/README.md, stop 39). A node that stops a handful of tasks at
    /// a time never meets the window.
    unsigned stopWindow = 64;
    std::string stateDir = "/var/lib/taskscope";
    std::string shimPath;  ///< defaults to the installed taskscope-shim
    /// The delegated scope the shims live in, outside the manager's cgroup
    /// (shim_home.hpp); empty keeps them in the manager's own cgroup, where
    /// any kill of the manager's unit takes them (for test benches only).
    std::string shimUnit = "taskscope-shims.scope";
    /// Hand task output to taskscope-streamer through fifos (rotated,
    /// followable, kept across restarts); false appends it to
    /// <log_dir>/<task>.{stdout,stderr}.0 unrotated, for nodes without the
    /// streamer.
    bool streamer = true;
    std::string logSpoolDir = "/run/taskscope/logs";  ///< fifos handed to the streamer
    int logMaxFiles = 10;       ///< default rotation: files kept per stream
    int logMaxFileSizeMb = 10;  ///< default rotation: size of one file
    /// A task's log_journal when its spec says nothing (key log_journal):
    /// the streamer copies its collected output to the journal too.
    bool logJournal = false;
    /// journald's stream socket (key journal_socket): a start that copies
    /// to the journal needs it there; another path only for tests.
    std::string journalSocket = "/run/systemd/journal/stdout";
    std::set<unsigned> systemCores;  ///< kept for the system, never given to tasks
    int64_t jobTimeoutMs = 90000;
    /// The bound on a start (key start_timeout_ms): a start whose task is
    /// not released by then fails with Overloaded, after its shim has left
    /// without running the task and what it made is undone. 20 s: below
    /// the 25 s a D-Bus client waits for an answer by default (sd-bus's
    /// BUS_DEFAULT_TIMEOUT, systemd src/libsystemd/sd-bus/bus-internal.h;
    /// libdbus's _DBUS_DEFAULT_TIMEOUT_VALUE, dbus/dbus-connection-internal.h),
    /// with room for the undo, so that busctl, dbus-send and the Nomad
    /// driver hear the start's real fate rather than their own timeout.
    /// Under a fork bomb systemd answered starts after 98-116 s (issue 48).
    int64_t startTimeoutMs = 20000;
    /// TasksMax of a task whose spec sets no pids_max (key default_pids_max;
    /// 0 leaves systemd's DefaultTasksMax, 15% of the kernel's pid limit,
    /// which lets one fork bomb fill a small node).
    uint64_t defaultPidsMax = kDefaultPidsMax;
    ReconcilerConfig danglingScopes;
    /// What nomad.slice is given so that tasks cannot starve the node's own
    /// services (node_slice.hpp; keys node_slice_limits,
    /// node_slice_cpu_weight, system_reserved_pids, system_reserved_memory_mb).
    NodeSliceConfig nodeSlice;
    /// Keys isolation_default, chroot_env, allowed_capabilities (issue 14).
    IsolationConfig isolation;
    /// Allocation networks (keys network_cni_path, network_bridge,
    /// network_subnet, network_conflist, network_plugin_timeout_ms,
    /// network_netns_dir, network_ipam_dir).
    network::NodeNetworkConfig network;
    /// Test fault points (TASKSCOPE_FAULT_POINTS=1 in the daemon's
    /// environment, never a config key): a start whose allocation ID begins
    /// with "fault-hold-<step>-" is held at that step (start_procedure.hpp's
    /// names, spaces as dashes: "fault-hold-scope-made-1") until its
    /// start_timeout_ms fails it. The system tier proves every step's undo
    /// under a real systemd with it, with no luck involved.
    bool faultPoints = false;
};

}  // namespace taskscope::manager
