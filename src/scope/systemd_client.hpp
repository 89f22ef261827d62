#pragma once
// The systemd client: everything taskscope asks of PID 1, asynchronously
// from a loop (SystemdClient) or blocking at startup (BlockingSystemd).
// Behind interfaces so the manager's logic is testable with a fake.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "scope/resources.hpp"

namespace taskscope::scope {

/// A unit's state as systemd reports it (ActiveState, SubState).
struct UnitState {
    std::string active;
    std::string sub;
};

/// A unit made in the same StartTransientUnit call as another (systemd's
/// "aux" units): loaded with its properties, not started by the call; the
/// main unit's dependencies start it in the same transaction (a scope
/// requires its Slice=). systemd refuses the whole call with UnitExists
/// when one of them is loaded already (src/core/dbus-manager.c,
/// transient_aux_units_from_message()).
struct AuxUnit {
    std::string name;
    UnitProperties properties;
};
/// Those of one call, and who hears that systemd took it.
struct AuxUnits {
    std::vector<AuxUnit> units;
    /// Once systemd answered the call (the units are loaded, their jobs
    /// queued; another unit's job that needs them waits for theirs),
    /// before the job is done. Not called when the call is refused.
    std::function<void()> accepted;
};

/// What the dangling-scope reconciler judges a unit by.
struct UnitInfo {
    std::string slice;           ///< Slice=
    UnitState state;
    uint64_t activeEnterUs = 0;  ///< ActiveEnterTimestamp (CLOCK_REALTIME µs); 0: never active
};

/// Everything taskscope asks of PID 1 from an event loop: asynchronous
/// only. Each call returns at once; its outcome comes from the loop, never
/// from inside the call. A daemon's loop never waits for PID 1, which a
/// fork bomb or a full node's stop can keep busy for seconds.
class SystemdClient {
public:
    using Completion = std::function<void(common::Result<void>)>;
    template <class T>
    using ValueCompletion = std::function<void(common::Result<T>)>;
    using StateCompletion = ValueCompletion<UnitState>;

    virtual ~SystemdClient() = default;

    /// Creates the transient scope `unit` holding `pids` with `properties`
    /// (Slice=, limits, ...); `done` gets the job's result (JobRemoved
    /// matched to the job the call returned, "done" or an error). A unit
    /// of that name left failed is reset and the start retried once.
    /// Errors: UnsupportedProperty (systemd does not know a property),
    /// SystemdFailed (the job failed or systemd refused). Calls for
    /// different units never wait for each other. `aux`: slices made in
    /// the same call (AuxUnits), for a scope that is the first in them.
    virtual void startScopeAsync(const std::string& unit, const std::vector<uint32_t>& pids,
                                 const UnitProperties& properties, const AuxUnits& aux, Completion done) = 0;
    /// Creates the transient slice `unit` with `properties` (no processes:
    /// systemd's slices take only cgroup properties, src/core/dbus-slice.c);
    /// `done` gets its job's result. A slice that exists already answers
    /// UnitExists (a failed one is reset and the start retried once).
    virtual void startSliceAsync(const std::string& unit, const UnitProperties& properties, Completion done) = 0;
    /// Stops the unit; `done` once its job is done.
    virtual void stopUnitAsync(const std::string& unit, Completion done) = 0;
    /// Changes properties of a running unit (runtime only).
    virtual void setUnitPropertiesAsync(const std::string& unit, const UnitProperties& properties, Completion done) = 0;
    /// Sends `signal` to `whom` ("all", "main") of the unit.
    virtual void killUnitAsync(const std::string& unit, const std::string& whom, int signal, Completion done) = 0;
    virtual void freezeUnitAsync(const std::string& unit, Completion done) = 0;
    virtual void thawUnitAsync(const std::string& unit, Completion done) = 0;
    virtual void resetFailedUnitAsync(const std::string& unit, Completion done) = 0;
    /// The unit's states ("inactive"/"dead" for a unit not loaded).
    virtual void unitStateAsync(const std::string& unit, StateCompletion done) = 0;
    /// The unit's cgroup path relative to the cgroup root; NoSuchUnit when
    /// systemd has no such unit loaded.
    virtual void controlGroupAsync(const std::string& unit, ValueCompletion<std::string> done) = 0;
    /// A scope's slice, state and activation time; NoSuchUnit when not loaded.
    virtual void unitInfoAsync(const std::string& unit, ValueCompletion<UnitInfo> done) = 0;
    /// Loaded units whose names match a glob (e.g. "*.scope").
    virtual void listUnitsAsync(const std::string& pattern, ValueCompletion<std::vector<std::string>> done) = 0;
    /// A start job for `unit`, which is active already (a job that does
    /// nothing), waited for: systemd runs its jobs only when nothing else
    /// is pending (its run queue is at SD_EVENT_PRIORITY_IDLE,
    /// src/core/manager.c), so once it is done systemd has handled every
    /// emptied cgroup and every call sent before, and run every job queued
    /// before, a new task's start among them. `done` also gets a failure.
    virtual void roundTripAsync(const std::string& unit, Completion done) = 0;
};

/// The same calls, each blocking until systemd has answered: for a
/// program's startup, before its loop runs (the manager's look at the
/// node, its shims' home made once, recovery asking a scope's cgroup), and
/// for tools. Never called from a loop's handler.
class BlockingSystemd {
public:
    virtual ~BlockingSystemd() = default;

    /// startScopeAsync's call, returning once systemd's job is done.
    virtual common::Result<void> startScope(const std::string& unit, const std::vector<uint32_t>& pids,
                                            const UnitProperties& properties) = 0;
    virtual common::Result<void> killUnit(const std::string& unit, const std::string& whom, int signal) = 0;
    virtual common::Result<void> freezeUnit(const std::string& unit) = 0;
    virtual common::Result<void> thawUnit(const std::string& unit) = 0;
    /// Stops the unit and waits for the job.
    virtual common::Result<void> stopUnit(const std::string& unit) = 0;
    virtual common::Result<void> resetFailedUnit(const std::string& unit) = 0;
    virtual common::Result<void> setUnitProperties(const std::string& unit, const UnitProperties& properties) = 0;
    virtual common::Result<std::string> controlGroup(const std::string& unit) = 0;
    virtual common::Result<UnitState> unitState(const std::string& unit) = 0;
    virtual common::Result<UnitInfo> unitInfo(const std::string& unit) = 0;
    virtual common::Result<std::vector<std::string>> listUnits(const std::string& pattern) = 0;
    /// systemd's version string ("252.39-1~deb12u1").
    virtual common::Result<std::string> version() = 0;
};

/// crun's answer to a start that finds the unit name taken (UnitExists):
/// a unit of that name left failed is reset (ResetFailedUnit) and `start`
/// retried once; an active one is a real conflict and its error stands.
common::Result<void> startResettingFailed(BlockingSystemd& systemd, const std::string& unit,
                                          const std::function<common::Result<void>()>& start);
/// The same policy for an asynchronous start: `start` is called with the
/// completion to use, once or (after a reset) twice.
void startResettingFailedAsync(SystemdClient& systemd, const std::string& unit,
                               std::function<void(SystemdClient::Completion)> start, SystemdClient::Completion done);

}  // namespace taskscope::scope
