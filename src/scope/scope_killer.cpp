// A kill of every process of a scope, per cgroup version (scope_killer.hpp).
#include "scope/scope_killer.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <spdlog/spdlog.h>

#include "common/error_names.hpp"
#include "common/files.hpp"
#include "common/unique_fd.hpp"
#include "scope/task_scope.hpp"

namespace taskscope::scope {

namespace {

// The outcome of a cgroup.kill write: done, the cgroup is gone (and every
// process with it), or the error to fall back on.
enum class Written { Killed, Gone, Failed };

// Freeze, kill all, thaw: each once systemd answered the one before. Holds
// nothing but the client (it outlives every daemon part that kills).
void freezeKillThaw(SystemdClient& systemd, const std::string& unit, ScopeKiller::Done done) {
    systemd.freezeUnitAsync(unit, [&systemd, unit, done = std::move(done)](common::Result<void> frozen) {
        // Not frozen (v1 without the freezer, or systemd refused): killed unfrozen.
        const bool thaw = static_cast<bool>(frozen);
        systemd.killUnitAsync(unit, "all", SIGKILL, [&systemd, unit, thaw, done](common::Result<void> k) {
            // NoSuchUnit: the scope is gone, and every process with it.
            common::Result<void> killed =
                !k && k.error().name != common::errors::kNoSuchUnit ? k : common::Result<void>();
            if (!thaw) return done(std::move(killed));
            systemd.thawUnitAsync(unit, [done, killed](common::Result<void>) mutable { done(std::move(killed)); });
        });
    });
}

}  // namespace

CgroupKill::CgroupKill(CgroupHost host, std::string slice, SystemdClient& systemd, common::Worker& worker)
    : host_(std::move(host)), slice_(std::move(slice)), systemd_(systemd), worker_(worker) {}

void CgroupKill::killAll(const std::string& unit, const std::string& cgroup, Done done) {
    // A cgroup not known (yet) or not the task's own scope: systemd knows
    // the unit's processes all the same.
    auto scopePath = checkTaskScope(cgroup, slice_, unit);
    if (!scopePath) {
        if (!cgroup.empty())
            spdlog::warn("Not writing cgroup.kill for {}: {}; asking systemd instead", unit, scopePath.error().message);
        return freezeKillThaw(systemd_, unit, std::move(done));
    }
    const auto killFile = host_.file(scopePath->str(), "", "cgroup.kill");
    if (!killFile) return freezeKillThaw(systemd_, unit, std::move(done));
    worker_.submit([this, unit, file = *killFile, done = std::move(done),
                    alive = std::weak_ptr<int>(lifetime_)]() -> std::function<void()> {
        auto outcome = Written::Failed;
        int err = 0;
        common::UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
        if (!fd && errno == ENOENT)
            outcome = Written::Gone;
        else if (fd && ::write(fd.get(), "1", 1) == 1)
            outcome = Written::Killed;
        else
            err = errno;
        return [this, unit, file, done, outcome, err, alive] {
            if (alive.expired()) return;
            if (outcome != Written::Failed) return done({});
            // systemd, then: what the kernel would not do, PID 1 may.
            const auto why = common::errnoError("write " + file, err);
            freezeKillThaw(systemd_, unit, [done, why](common::Result<void> r) {
                if (!r) return done(r.error().context(why.message + "; systemd asked instead"));
                done({});
            });
        };
    });
}

void SystemdFreezeKill::killAll(const std::string& unit, const std::string&, Done done) {
    freezeKillThaw(systemd_, unit, std::move(done));
}

void SystemdFreezeKill::killLeftovers(const std::string& unit, const std::string&, Done done) {
    auto& systemd = systemd_;
    systemd.unitStateAsync(unit, [&systemd, unit, done = std::move(done)](common::Result<UnitState> st) {
        if (!st || st->active != "active") return done({});
        freezeKillThaw(systemd, unit, done);
    });
}

std::unique_ptr<ScopeKiller> makeScopeKiller(const CgroupHost& host, const std::string& slice, SystemdClient& systemd,
                                             common::Worker& worker) {
    if (host.unified()) return std::make_unique<CgroupKill>(host, slice, systemd, worker);
    return std::make_unique<SystemdFreezeKill>(systemd);
}

common::Result<void> signalIfInUnit(pid_t pid, const std::string& slice, const std::string& unit, int signal) {
    const auto text = common::readFile("/proc/" + std::to_string(pid) + "/cgroup");
    if (!text || !inTaskScope(*text, slice, unit))
        return common::makeError(common::errors::kNotRunning,
                                 "its main process " + std::to_string(pid) + " is not in its scope");
    if (::kill(pid, signal) < 0) return common::errnoError("signal pid " + std::to_string(pid), errno);
    return {};
}

}  // namespace taskscope::scope
