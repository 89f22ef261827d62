#pragma once
// Where the shims live: taskscope-shims.scope, a delegated scope of their
// own. Not the manager's service cgroup, where `systemctl kill`, stop,
// restart or an OOM kill of the manager's unit would take every shim and
// with it every running task's exit code; not a task's scope either (seed
// 001: the supervisor never joins the cgroup it supervises, or the task's
// stats, OOM kills and cgroup.kill would include it).
//
// A scope is stopped by systemd the moment it is empty, so the scope is
// made around a placeholder process (`taskscope-shim --hold`) that keeps
// it while no task runs. Each new shim makes its task in it (cgroup v2:
// clone3 into the cgroup) and moves itself in once it has reported the
// task's pid (`--join-cgroup`; on v1 before the fork), a write to
// cgroup.procs made while systemd makes the task's scope, not a round trip
// to systemd per start: the scope is delegated, so its processes are ours
// to place (systemd's delegation contract).

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "scope/systemd_client.hpp"

namespace taskscope::manager {

inline constexpr const char* kShimHomeUnit = "taskscope-shims.scope";

/// The cgroup.procs file of the cgroup `relPath` (as systemd's
/// ControlGroup names it) in every cgroup hierarchy mounted per `mountinfo`
/// (/proc/self/mountinfo's text): one on cgroup v2, one per hierarchy on
/// v1 and hybrid. Existence is not checked.
std::vector<std::string> cgroupProcsFiles(std::string_view mountinfo, const std::string& relPath);

class ShimHome {
public:
    ShimHome(scope::SystemdClient& systemd, std::string shimPath, std::string unit = kShimHomeUnit);
    ~ShimHome();
    ShimHome(const ShimHome&) = delete;
    ShimHome& operator=(const ShimHome&) = delete;

    /// Makes sure the scope runs (creating it around a placeholder when it
    /// does not) and learns its cgroups. Synchronous: called at startup and
    /// again only when the scope has gone (someone stopped it).
    common::Result<void> ensure();

    /// The cgroup.procs files a new shim joins. Re-creates the scope first
    /// if it has gone; empty if it cannot be had (then shims stay where the
    /// manager is, as before 0.2, and the journal says why).
    const std::vector<std::string>& procsFiles();

    /// Moves a running process (a shim an older manager left in its own
    /// cgroup) into the home. Errors: the first failed write.
    common::Result<void> adopt(pid_t pid) const;

    const std::string& unit() const { return unit_; }

private:
    bool present() const;

    scope::SystemdClient& systemd_;
    std::string shimPath_;
    std::string unit_;
    std::vector<std::string> procs_;
    /// When ensure() last failed: starts meanwhile do not ask again (each
    /// try is a synchronous round trip to systemd).
    std::chrono::steady_clock::time_point lastFailure_{};
};

}  // namespace taskscope::manager
