#include "manager/shim_home.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <limits>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/files.hpp"
#include "common/unique_fd.hpp"
#include "manager/launcher.hpp"

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
    p.emplace_back("MemoryAccounting", sdbus::Variant(true));
    p.emplace_back("TasksAccounting", sdbus::Variant(true));
    p.emplace_back("DevicePolicy", sdbus::Variant(std::string("closed")));
    std::vector<sdbus::Struct<std::string, std::string>> devices;
    for (const auto& [path, access] : kShimDevices) devices.emplace_back(path, access);
    p.emplace_back("DeviceAllow", sdbus::Variant(devices));
    return p;
}

Result<pid_t> spawnHolder(const std::string& shimPath) {
    std::string arg0 = shimPath, arg1 = "--hold";
    char* argv[] = {arg0.data(), arg1.data(), nullptr};
    char* envp[] = {nullptr};
    auto pid = spawnShimProcess(shimPath, argv, envp);
    if (!pid) return pid.error().context("spawn the placeholder");
    return *pid;
}

}  // namespace

std::vector<std::string> cgroupProcsFiles(std::string_view mountinfo, const std::string& relPath) {
    // mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS"
    std::vector<std::string> out;
    std::istringstream in{std::string(mountinfo)};
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string id, parent, dev, root, mountpoint, word;
        if (!(f >> id >> parent >> dev >> root >> mountpoint)) continue;
        while (f >> word && word != "-") {
        }
        std::string fstype;
        if (word != "-" || !(f >> fstype)) continue;
        if (fstype != "cgroup" && fstype != "cgroup2") continue;
        // A hierarchy bind-mounted from below its root (a container's
        // view) does not show the host's paths: not ours to write.
        if (root != "/") continue;
        out.push_back(mountpoint + relPath + "/cgroup.procs");
    }
    return out;
}

ShimHome::ShimHome(scope::SystemdClient& systemd, std::string shimPath, std::string unit)
    : systemd_(systemd), shimPath_(std::move(shimPath)), unit_(std::move(unit)) {}

ShimHome::~ShimHome() = default;

bool ShimHome::present() const { return !procs_.empty() && ::access(procs_.front().c_str(), F_OK) == 0; }

Result<void> ShimHome::ensure() {
    procs_.clear();
    pid_t holder = 0;  // ours to take back if the scope proves unusable
    auto state = systemd_.unitState(unit_);
    if (!state || state->active != "active") {
        auto spawned = spawnHolder(shimPath_);
        if (!spawned) return spawned.error();
        const auto pid = *spawned;
        auto started = systemd_.startScope(unit_, {static_cast<uint32_t>(pid)}, homeProperties());
        if (!started) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
            return started.error().context("create " + unit_);
        }
        holder = pid;
        spdlog::info("Created {} for the task shims (placeholder pid {})", unit_, pid);
    }
    auto found = [&]() -> Result<void> {
        auto group = systemd_.controlGroup(unit_);
        if (!group) return group.error().context("find the cgroup of " + unit_);
        auto mountinfo = common::readFile("/proc/self/mountinfo");
        if (!mountinfo) return mountinfo.error();
        for (auto& file : cgroupProcsFiles(*mountinfo, *group))
            if (::access(file.c_str(), W_OK) == 0) procs_.push_back(std::move(file));
        if (procs_.empty()) return common::makeError("Internal", "no cgroup of " + unit_ + " (" + *group + ") found");
        return {};
    }();
    if (!found && holder > 0) {
        ::kill(holder, SIGKILL);
        ::waitpid(holder, nullptr, 0);
    }
    return found;
}

const std::vector<std::string>& ShimHome::procsFiles() {
    if (present()) return procs_;
    const auto now = std::chrono::steady_clock::now();
    if (lastFailure_ != std::chrono::steady_clock::time_point{} && now - lastFailure_ < std::chrono::seconds(10)) {
        procs_.clear();
        return procs_;
    }
    if (auto r = ensure(); !r) {
        lastFailure_ = now;
        spdlog::error("Shims stay in the manager's cgroup, where a kill of its unit takes them: {}", r.error().message);
    } else {
        lastFailure_ = {};
    }
    return procs_;
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
