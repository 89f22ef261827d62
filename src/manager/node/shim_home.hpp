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

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "common/worker.hpp"
#include "scope/systemd_client.hpp"

namespace taskscope::manager {

inline constexpr const char* kShimHomeUnit = "taskscope-shims.scope";

class ShimHome {
public:
    /// `startup`: for ensure() at startup; `systemd` and `loop`: for
    /// making it again later, asynchronously.
    ShimHome(scope::BlockingSystemd& startup, scope::SystemdClient& systemd, common::EventLoop& loop,
             std::string shimPath, std::string unit = kShimHomeUnit);
    ~ShimHome();
    ShimHome(const ShimHome&) = delete;
    ShimHome& operator=(const ShimHome&) = delete;

    /// Makes sure the scope runs (creating it around a placeholder when it
    /// does not) and learns its cgroups. Blocking: at startup only.
    common::Result<void> ensure();

    /// The cgroup.procs files a new shim joins, to `ready` (from the loop,
    /// or at once while the home is there). When it has gone (someone
    /// stopped it) it is made again first, asynchronously, once for all the
    /// starts that ask meanwhile; empty if it cannot be had (then shims stay
    /// where the manager is, as before 0.2, and the journal says why).
    using Ready = std::function<void(std::vector<std::string> procsFiles)>;
    void whenReady(Ready ready);

    /// Moves a running process (a shim an older manager left in its own
    /// cgroup) into the home. Errors: the first failed write.
    common::Result<void> adopt(pid_t pid) const;

    const std::string& unit() const { return unit_; }

    /// What the operator is told (the daemon's edge words it; nothing here
    /// logs): the home made around a placeholder, or found unusable (the
    /// shims then stay in the manager's cgroup, where a kill of its unit
    /// takes them). Unset: nobody hears.
    struct Notes {
        std::function<void(const std::string& unit, pid_t placeholder)> made;
        std::function<void(const common::Error& why)> unusable;
    };
    void setNotes(Notes notes) { notes_ = std::move(notes); }

private:
    void noteMade(pid_t holder) const {
        if (notes_.made) notes_.made(unit_, holder);
    }
    bool present() const;
    /// The asynchronous ensure(): each step from the loop.
    void remake();
    void learnCgroups(pid_t holder);
    void remade(common::Result<void> r, pid_t holder);

    scope::BlockingSystemd& startup_;
    scope::SystemdClient& systemd_;
    common::EventLoop& loop_;
    std::string shimPath_;
    std::string unit_;
    std::vector<std::string> procs_;
    std::vector<Ready> waiting_;  ///< starts waiting for the home being made again
    /// When making it last failed: starts meanwhile do not ask again.
    std::chrono::steady_clock::time_point lastFailure_{};
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
    /// The placeholder's spawn and a failed one's reaping: off the loop.
    common::Worker worker_;
    Notes notes_;
};

}  // namespace taskscope::manager
