// The shims' own delegated scope made and kept (shim_home.hpp): the
// placeholder that holds it, spawned and reaped off the loop.
#include "manager/node/shim_home.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <limits>

#include "common/error_names.hpp"
#include "common/files.hpp"
#include "common/unique_fd.hpp"
#include "manager/node/shim_spawn.hpp"
#include "scope/cgroup_host.hpp"
#include "scope/resources.hpp"

extern "C" {
#include "shim/shim_protocol.h"
}

namespace taskscope::manager {

namespace {

using common::Result;

// The devices a shim opens (its stdio and the task's when logs are off),
// as the manager's own unit allows them: the shims keep the sandbox they
// had while they lived in the manager's cgroup.
const std::vector<std::pair<std::string, std::string>> kShimDevices = {
    {"/dev/null", "rw"}, {"/dev/zero", "rw"}, {"/dev/full", "rw"}, {"/dev/random", "r"}, {"/dev/urandom", "r"}};

scope::UnitProperties homeProperties() {
    scope::UnitProperties p;
    p.emplace_back("Slice", sdbus::Variant(std::string("system.slice")));
    p.emplace_back("Description", sdbus::Variant(std::string("taskscope task shims (one per task, until its output is drained)")));
    // Ours to place processes in (the shims move themselves in).
    p.emplace_back("Delegate", sdbus::Variant(true));
    p.emplace_back("CollectMode", sdbus::Variant(std::string("inactive-or-failed")));
    // One shim per task: systemd's default TasksMax (15% of pid_max) would
    // cap a node at a few thousand tasks.
    p.emplace_back("TasksMax", sdbus::Variant(std::numeric_limits<uint64_t>::max()));
    // What the shims cost shows in the scope's own accounting.
    scope::addAccountingProperties(p, false);
    p.emplace_back("DevicePolicy", sdbus::Variant(std::string("closed")));
    std::vector<sdbus::Struct<std::string, std::string>> devices;
    for (const auto& [path, access] : kShimDevices) devices.emplace_back(path, access);
    p.emplace_back("DeviceAllow", sdbus::Variant(devices));
    return p;
}

Result<pid_t> spawnHolder(const std::string& shimPath) {
    std::string arg0 = shimPath, arg1 = SHIM_OPT_HOLD;
    char* argv[] = {arg0.data(), arg1.data(), nullptr};
    char* envp[] = {nullptr};
    auto pid = spawnShimProcess(shimPath, argv, envp);
    if (!pid) return pid.error().context("spawn the placeholder");
    return *pid;
}

}  // namespace

ShimHome::ShimHome(scope::BlockingSystemd& startup, scope::SystemdClient& systemd, common::EventLoop& loop,
                   std::string shimPath, std::string unit)
    : startup_(startup),
      systemd_(systemd),
      loop_(loop),
      shimPath_(std::move(shimPath)),
      unit_(std::move(unit)),
      worker_(loop) {}

ShimHome::~ShimHome() = default;

bool ShimHome::present() const { return !procs_.empty() && ::access(procs_.front().c_str(), F_OK) == 0; }

Result<void> ShimHome::ensure() {
    procs_.clear();
    pid_t holder = 0;  // ours to take back if the scope proves unusable
    auto state = startup_.unitState(unit_);
    if (!state || state->active != "active") {
        auto spawned = spawnHolder(shimPath_);
        if (!spawned) return spawned.error();
        const auto pid = *spawned;
        auto started = startup_.startScope(unit_, {static_cast<uint32_t>(pid)}, homeProperties());
        if (!started) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
            return started.error().context("create " + unit_);
        }
        holder = pid;
        noteMade(pid);
    }
    auto found = [&]() -> Result<void> {
        auto group = startup_.controlGroup(unit_);
        if (!group) return group.error().context("find the cgroup of " + unit_);
        auto files = scope::writableProcsFiles(*group);
        if (!files) return files.error();
        procs_ = std::move(*files);
        if (procs_.empty()) return common::makeError(common::errors::kInternal, "no cgroup of " + unit_ + " (" + *group + ") found");
        return {};
    }();
    if (!found && holder > 0) {
        ::kill(holder, SIGKILL);
        ::waitpid(holder, nullptr, 0);
    }
    return found;
}

void ShimHome::whenReady(Ready ready) {
    if (present()) return ready(procs_);
    const auto now = std::chrono::steady_clock::now();
    if (lastFailure_ != std::chrono::steady_clock::time_point{} && now - lastFailure_ < std::chrono::seconds(10))
        return ready({});
    waiting_.push_back(std::move(ready));
    if (waiting_.size() == 1) remake();
}

void ShimHome::remake() {
    procs_.clear();
    systemd_.unitStateAsync(unit_, [this, alive = std::weak_ptr<int>(lifetime_)](Result<scope::UnitState> state) {
        if (alive.expired()) return;
        if (state && state->active == "active") return learnCgroups(0);
        // Around a placeholder, spawned off the loop (posix_spawn holds
        // its thread until the child has exec'd).
        worker_.submit([this, alive, shimPath = shimPath_]() -> std::function<void()> {
            auto pid = spawnHolder(shimPath);
            return [this, alive, pid] {
                if (alive.expired()) return;
                if (!pid) return remade(pid.error(), 0);
                systemd_.startScopeAsync(unit_, {static_cast<uint32_t>(*pid)}, homeProperties(), {},
                                         [this, alive, holder = *pid](Result<void> started) {
                                             if (alive.expired()) return;
                                             if (!started) return remade(started.error().context("create " + unit_), holder);
                                             noteMade(holder);
                                             learnCgroups(holder);
                                         });
            };
        });
    });
}

void ShimHome::learnCgroups(pid_t holder) {
    systemd_.controlGroupAsync(unit_, [this, holder, alive = std::weak_ptr<int>(lifetime_)](Result<std::string> group) {
        if (alive.expired()) return;
        if (!group) return remade(group.error().context("find the cgroup of " + unit_), holder);
        auto files = scope::writableProcsFiles(*group);
        if (!files) return remade(files.error(), holder);
        procs_ = std::move(*files);
        if (procs_.empty())
            return remade(common::makeError(common::errors::kInternal, "no cgroup of " + unit_ + " (" + *group + ") found"),
                          holder);
        remade({}, 0);
    });
}

void ShimHome::remade(Result<void> r, pid_t holder) {
    if (!r) {
        lastFailure_ = std::chrono::steady_clock::now();
        procs_.clear();
        if (notes_.unusable) notes_.unusable(r.error());
        // A placeholder of a scope that proved unusable is ours to take back.
        if (holder > 0)
            worker_.submit([holder]() -> std::function<void()> {
                ::kill(holder, SIGKILL);
                ::waitpid(holder, nullptr, 0);
                return {};
            });
    } else {
        lastFailure_ = {};
    }
    auto waiting = std::move(waiting_);
    waiting_.clear();
    for (auto& ready : waiting) ready(procs_);
}

Result<void> ShimHome::adopt(pid_t pid) const {
    const auto text = std::to_string(pid);
    for (const auto& file : procs_) {
        common::UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
        if (!fd || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
            return common::errnoError("move pid " + text + " into " + file, errno);
    }
    return {};
}

}  // namespace taskscope::manager
