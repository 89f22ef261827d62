#pragma once
// Killing every process of a task's scope, the way the node's cgroup
// version allows (crun's cgroup manager is a strategy per version too):
//
//   v2  the kernel kills every process of the cgroup at once, forks
//       meanwhile included: cgroup.kill, an action and not a setting
//       systemd manages or could undo. Asking systemd instead (FreezeUnit,
//       then KillUnit) fails exactly when it matters: a fork bomb keeps
//       PID 1 busy reaping orphans until it stops answering (seen in the
//       test bed with systemd 252). The write waits behind the kernel's
//       cgroup lock, so it is made on a worker, never on the loop; when it
//       fails, systemd is asked after all.
//   v1  freeze through systemd where it can (frozen processes cannot
//       fork), SIGKILL everything, thaw so the kill is delivered; each step
//       once systemd answered the one before, never waiting in the loop.

#include <functional>
#include <memory>
#include <string>

#include "common/result.hpp"
#include "common/worker.hpp"
#include "scope/cgroup_host.hpp"
#include "scope/systemd_client.hpp"

namespace taskscope::scope {

class ScopeKiller {
public:
    using Done = std::function<void(common::Result<void>)>;
    virtual ~ScopeKiller() = default;

    /// SIGKILL to every process of the unit (its cgroup as the task record
    /// has it), now. `done` hears whether the kill was delivered (not when
    /// the processes are gone: their shim's exit record says that).
    virtual void killAll(const std::string& unit, const std::string& cgroup, Done done) = 0;
    /// What a task whose main process ended left in its scope (as Nomad's
    /// executor ends a task): the same, where anything can be left.
    virtual void killLeftovers(const std::string& unit, const std::string& cgroup, Done done) = 0;
};

/// cgroup v2: cgroup.kill, written on `worker`; systemd when that fails.
/// Only ever into the task's own scope below `slice` (issue 32): a
/// record's cgroup that is not it ("/" read under an unexpected layout,
/// where the write would kill every process of the node) goes to systemd.
class CgroupKill final : public ScopeKiller {
public:
    CgroupKill(CgroupHost host, std::string slice, SystemdClient& systemd, common::Worker& worker);
    void killAll(const std::string& unit, const std::string& cgroup, Done done) override;
    void killLeftovers(const std::string& unit, const std::string& cgroup, Done done) override {
        killAll(unit, cgroup, std::move(done));
    }

private:
    CgroupHost host_;
    std::string slice_;
    SystemdClient& systemd_;
    common::Worker& worker_;
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
};

/// cgroup v1: FreezeUnit, KillUnit all SIGKILL, ThawUnit (each asynchronous).
class SystemdFreezeKill final : public ScopeKiller {
public:
    explicit SystemdFreezeKill(SystemdClient& systemd) : systemd_(systemd) {}
    void killAll(const std::string& unit, const std::string& cgroup, Done done) override;
    /// Only while the unit is active: a scope systemd already stopped has
    /// nothing left (its state asked asynchronously too).
    void killLeftovers(const std::string& unit, const std::string& cgroup, Done done) override;

private:
    SystemdClient& systemd_;
};

/// The strategy for `host`'s version; tasks' scopes sit below `slice`.
std::unique_ptr<ScopeKiller> makeScopeKiller(const CgroupHost& host, const std::string& slice, SystemdClient& systemd,
                                             common::Worker& worker);

/// Sends `signal` to `pid` only while it is in the unit's scope below
/// `slice` on some hierarchy (a recycled PID never is): reads
/// /proc/<pid>/cgroup, so a worker's call. NotRunning when it is not there.
common::Result<void> signalIfInUnit(pid_t pid, const std::string& slice, const std::string& unit, int signal);

}  // namespace taskscope::scope
