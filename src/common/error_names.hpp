#pragma once
// The names of taskscope's errors: the last component of the D-Bus error
// org.taskscope.Error.<name> (common/bus_error.hpp), and what callers
// compare an Error's name with. One list, so a name is never spelled twice
// (dbus/org.taskscope.Manager1.xml documents which call returns which).

namespace taskscope::common::errors {

// Anything the caller cannot act on but report.
inline constexpr const char kInternal[] = "Internal";
inline constexpr const char kInvalidArgument[] = "InvalidArgument";
inline constexpr const char kCancelled[] = "Cancelled";
inline constexpr const char kTimeout[] = "Timeout";
inline constexpr const char kBusy[] = "Busy";
inline constexpr const char kNotFound[] = "NotFound";
/// A cgroup (or another kernel object) went away while it was read.
inline constexpr const char kGone[] = "Gone";
inline constexpr const char kNotSupported[] = "NotSupported";
inline constexpr const char kPermissionDenied[] = "PermissionDenied";
/// Out of descriptors or another per-process limit.
inline constexpr const char kResourceExhausted[] = "ResourceExhausted";

// What a caller handed in.
inline constexpr const char kInvalidSpec[] = "InvalidSpec";
inline constexpr const char kInvalidConfig[] = "InvalidConfig";
inline constexpr const char kInvalidName[] = "InvalidName";
inline constexpr const char kInvalidSignal[] = "InvalidSignal";
inline constexpr const char kInvalidCpuList[] = "InvalidCpuList";
inline constexpr const char kUnknownUser[] = "UnknownUser";
/// The resolved user or one of its groups is in the spec's denied_uids / denied_gids.
inline constexpr const char kDeniedUser[] = "DeniedUser";
inline constexpr const char kNoSuchBinary[] = "NoSuchBinary";
/// A device the spec names (devices, IO limits) is not on the node.
inline constexpr const char kNoSuchDevice[] = "NoSuchDevice";

// Tasks.
inline constexpr const char kNoSuchTask[] = "NoSuchTask";
inline constexpr const char kTaskExists[] = "TaskExists";
inline constexpr const char kUnitNameCollision[] = "UnitNameCollision";
inline constexpr const char kNotRunning[] = "NotRunning";
inline constexpr const char kStillRunning[] = "StillRunning";
inline constexpr const char kShuttingDown[] = "ShuttingDown";
inline constexpr const char kExecFailed[] = "ExecFailed";
inline constexpr const char kInsufficientCores[] = "InsufficientCores";
/// A start the node could not finish in time (systemd or the bus busy,
/// start_timeout_ms): nothing of it was left and its command never ran;
/// the same start may succeed when retried. Never a fault of the spec.
inline constexpr const char kOverloaded[] = "Overloaded";
/// The task's output is to be copied to the journal (log_journal) and
/// journald's stream socket is not there.
inline constexpr const char kJournalUnavailable[] = "JournalUnavailable";

// systemd's answers, named (scope/sdbus_systemd_client.cpp maps them).
inline constexpr const char kSystemdFailed[] = "SystemdFailed";
inline constexpr const char kNoSuchUnit[] = "NoSuchUnit";
inline constexpr const char kUnitExists[] = "UnitExists";
inline constexpr const char kUnsupportedProperty[] = "UnsupportedProperty";

// Allocation networks.
inline constexpr const char kNoSuchNetwork[] = "NoSuchNetwork";
inline constexpr const char kNetworkExists[] = "NetworkExists";
inline constexpr const char kNetworkInUse[] = "NetworkInUse";
inline constexpr const char kPortInUse[] = "PortInUse";
inline constexpr const char kCniFailed[] = "CniFailed";

// Plugins.
inline constexpr const char kPluginNameInUse[] = "PluginNameInUse";
inline constexpr const char kPluginFailed[] = "PluginFailed";

// The streamer and its clients.
inline constexpr const char kNoSuchSession[] = "NoSuchSession";
/// An allocation of which the stats sampler knows no running task.
inline constexpr const char kNoSuchAllocation[] = "NoSuchAllocation";
/// A task the stats sampler has no sample of (yet).
inline constexpr const char kNoSample[] = "NoSample";
/// A client could not reach taskscope-manager (no such name on the bus).
inline constexpr const char kNoManager[] = "NoManager";

}  // namespace taskscope::common::errors
