// Nomad's TaskConfig turned into taskscope's task spec
// (task_spec_builder.hpp).
#include "nomad/task_spec_builder.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "common/cpu_list.hpp"
#include "nomad/cty_msgpack.hpp"
#include "nomad/devices_network.hpp"
#include "nomad/env_filter.hpp"
#include "nomad/hcl_block.hpp"
#include "nomad/node_task_config.hpp"
#include "nomad/task_config.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::nomad {

namespace {

using common::Result;
using nlohmann::json;
namespace pb = hashicorp::nomad::plugins::drivers::proto;

using hclblock::invalid;

// Nomad's MemoryNoLimit sentinel for resources.memory_max.
constexpr int64_t kMemoryNoLimit = -1;

// Nomad's dynamic workload user names (helper/users/dynamic/users.go
// String and Parse, Nomad aa026cc99cfb): "nomad-<id>", <id> at most
// MaxInt32; the UID and the GID are both <id>. No user database knows
// them (the task runner sets TaskConfig.User to one for a task without a
// user when the driver answers dynamic_workload_users:
// client/allocrunner/taskrunner/dynamic_users_hook.go Prestart).
std::optional<std::string> dynamicUserId(const std::string& user) {
    constexpr std::string_view kPrefix = "nomad-";
    if (!user.starts_with(kPrefix) || user.size() == kPrefix.size() || user.size() > kPrefix.size() + 10)
        return std::nullopt;
    const auto digits = user.substr(kPrefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    const unsigned long long id = std::stoull(digits);
    if (id > 0x7fffffffULL) return std::nullopt;
    return std::to_string(id);
}

// Why raw_exec's cgroup overrides cannot mean the same here, and what to do.
constexpr const char* kCgroupOverrideWhy =
    " cannot be honoured: under taskscope a task's cgroup is its own systemd scope (<alloc_id>-<task>.scope), "
    "which its limits, stats, stop and OOM report belong to, and a task never joins a cgroup of the operator's "
    "choosing. Remove the key; limit the task with its resources block, and give tasks that must share "
    "resources one allocation (its slice)";

// exec's capability rule (drivers/shared/capabilities Calculate, Nomad
// aa026cc99cfb): cap_add within allow_caps; the set is exec's defaults
// within allow_caps, minus cap_drop, plus cap_add (cap_add wins over
// cap_drop). The manager starts from the same defaults and applies the
// spec's cap_drop after its cap_add, so the drops it is given are the
// defaults allow_caps leaves out and the task's own, minus what it adds.
Result<void> addCapabilities(const TaskBlock& block, const DriverConfig& driver, spec::Isolation& iso) {
    const CapSet notAllowed = block.capAdd & ~driver.allowCaps;
    if (notAllowed) {
        std::string names;
        for (const auto& n : capNames(notAllowed)) names += (names.empty() ? "" : ", ") + n;
        return invalid("config.cap_add: the plugin's allow_caps does not allow " + names);
    }
    const CapSet drop = ((nomadDefaultCaps() & ~driver.allowCaps) | block.capDrop) & ~block.capAdd;
    for (int c = 0; c < 64; ++c) {
        if (block.capAdd & (CapSet{1} << c)) iso.capAdd.push_back(c);
        if (!block.capDropAll && (drop & (CapSet{1} << c))) iso.capDrop.push_back(c);
    }
    iso.capDropAll = block.capDropAll;
    return {};
}

// Nomad allows shares down to 0 and up to the node's MHz; cgroup v1
// shares, which taskscope takes, are spec::kCpuSharesMin..kCpuSharesMax.
int64_t clampShares(int64_t shares) {
    return std::clamp<int64_t>(shares, spec::kCpuSharesMin, spec::kCpuSharesMax);
}

Result<spec::Resources> resources(const pb::Resources& r) {
    spec::Resources out;
    const auto& alloc = r.allocated_resources();
    if (alloc.memory().memory_mb() > 0) out.memoryMb = alloc.memory().memory_mb();
    // Nomad's memory_max (drivers/shared/executor/utils.go memoryLimits,
    // Nomad aa026cc99cfb): -1 is no hard limit with memory as the
    // reservation (memory.max = max, memory.low = memory); above memory,
    // the hard limit with memory reserved; otherwise memory is the hard
    // limit. The scope's properties follow the spec (scope/resources.cpp).
    const int64_t memoryMax = alloc.memory().memory_max_mb();
    if (memoryMax == kMemoryNoLimit || memoryMax > alloc.memory().memory_mb()) out.memoryMaxMb = memoryMax;
    if (alloc.cpu().cpu_shares() > 0)
        out.cpuShares = static_cast<uint64_t>(clampShares(alloc.cpu().cpu_shares()));
    else if (r.linux_resources().cpu_shares() > 0)
        out.cpuShares = static_cast<uint64_t>(clampShares(r.linux_resources().cpu_shares()));
    if (!r.linux_resources().cpuset_cpus().empty()) {
        auto cpus = common::parseCpuList(r.linux_resources().cpuset_cpus());
        if (!cpus) return invalid("resources.cpuset_cpus: " + cpus.error().message);
        out.cpuset = std::move(*cpus);
    }
    return out;
}

std::string join(const std::string& dir, const std::string& name) { return dir + "/" + name; }

// Nomad's layout of an allocation (client/allocdir): <alloc_dir>/alloc is
// the directory its tasks share, <alloc_dir>/<task> a task's directory
// with local/ and secrets/ (a tmpfs Nomad mounted and fills with
// templates and tokens).
struct NomadDirs {
    std::string shared, task, local, secrets;
};

NomadDirs nomadDirs(const pb::TaskConfig& cfg) {
    // The manager takes a task's dirs only when no symlink leads to them
    // (a task could swap a link it can write: issue 32), while Nomad's
    // data_dir may well sit behind one an operator made (/opt/nomad ->
    // /data/nomad). That link is the operator's, not a task's: the driver
    // names the real directory. One it cannot resolve is passed as given
    // and refused by the manager with the reason.
    std::string alloc = cfg.alloc_dir();
    if (char* real = ::realpath(alloc.c_str(), nullptr)) {
        alloc = real;
        std::free(real);
    }
    const std::string task = join(alloc, cfg.name());
    return {join(alloc, "alloc"), task, join(task, "local"), join(task, "secrets")};
}

Result<void> addChroot(const pb::TaskConfig& cfg, const TaskBlock& block, const DriverConfig& driver,
                       spec::TaskSpec& out) {
    if (driver.noPivotRoot)
        return invalid("the plugin's no_pivot_root = true cannot be honoured for an isolated task: taskscope's shim "
                       "enters a task's own root only with pivot_root (src/shim/rootfs.c) and has no move-and-chroot "
                       "path like exec's. On a node whose root is a ramdisk, run tasks with "
                       "isolation = \"none\" (or default_isolation = \"none\"); elsewhere remove no_pivot_root");
    // Nomad's device plugins' devices, bound into the task's /dev and
    // allowed in its scope, as exec binds and allows them.
    if (auto r = addNomadDevices(cfg, true, out); !r) return r;
    spec::Isolation iso;
    iso.filesystem = true;
    iso.pidHost = block.pidHost.value_or(driver.defaultPidHost);
    iso.ipcHost = block.ipcHost.value_or(driver.defaultIpcHost);
    if (auto r = addCapabilities(block, driver, iso); !r) return r;
    // exec's work_dir: the working directory inside the task's root.
    if (!block.workDir.empty()) out.cwd = block.workDir;
    if (!cfg.alloc_dir().empty()) {
        const auto d = nomadDirs(cfg);
        iso.taskDir = d.task;
        iso.allocDir = d.shared;
        // Nomad's own secrets dir (a tmpfs where it renders templates and
        // the Vault token), not a fresh one of taskscope's.
        iso.secretsDir = d.secrets;
    }
    for (const auto& m : cfg.mounts()) {
        if (m.host_path().empty() || m.task_path().empty()) return invalid("a mount needs host_path and task_path");
        // Nomad's propagation modes are taskscope's names ("" is private).
        const std::string prop = m.propagation_mode().empty() ? "private" : m.propagation_mode();
        spec::Volume v{m.host_path(), m.task_path(), m.readonly(), spec::Propagation::Private};
        if (prop == "host-to-task")
            v.propagation = spec::Propagation::HostToTask;
        else if (prop == "bidirectional")
            v.propagation = spec::Propagation::Bidirectional;
        else if (prop != "private")
            return invalid("mount " + m.task_path() + ": unknown propagation_mode " + prop);
        iso.volumes.push_back(std::move(v));
    }
    out.isolation = std::move(iso);
    out.isolationGiven = true;
    return {};
}

// What a task on the host's root cannot be given, said by key: exec's
// namespace and capability keys need the task's own root.
Result<void> checkHostRootBlock(const TaskBlock& block) {
    if (block.pidHost && !*block.pidHost)
        return invalid("config.pid_mode = \"private\" needs isolation = \"chroot\": a task on the host's root "
                       "shares the host's pid namespace");
    if (block.ipcHost && !*block.ipcHost)
        return invalid("config.ipc_mode = \"private\" needs isolation = \"chroot\": a task on the host's root "
                       "shares the host's ipc namespace");
    if (block.capAdd)
        return invalid("config.cap_add needs isolation = \"chroot\": a task on the host's root keeps what its "
                       "user has (cap_drop cuts its bounding set)");
    return {};
}

Result<void> addHostRoot(const pb::TaskConfig& cfg, const TaskBlock& block, spec::TaskSpec& out) {
    if (cfg.mounts_size() > 0)
        return invalid("mounts need isolation = \"chroot\": on the host's root there is nothing to bind into");
    if (auto r = checkHostRootBlock(block); !r) return r;
    if (auto r = addNomadDevices(cfg, false, out); !r) return r;
    // Said explicitly: a node whose manager isolates specs without an
    // isolation object (default_isolated) must still run this task on the
    // host's root, as the job asked.
    out.isolation = spec::Isolation{};
    out.isolation.filesystem = false;
    out.isolationGiven = true;
    // cap_drop cuts the bounding set (the only capability key there).
    out.isolation.capDropAll = block.capDropAll;
    for (int c = 0; c < 64 && !block.capDropAll; ++c)
        if (block.capDrop & (CapSet{1} << c)) out.isolation.capDrop.push_back(c);
    if (!block.workDir.empty()) out.cwd = block.workDir;  // raw_exec's work_dir: a host path
    if (cfg.alloc_dir().empty()) return {};
    const auto d = nomadDirs(cfg);
    // raw_exec runs a task without work_dir in its task dir.
    if (block.workDir.empty()) out.cwd = d.task;
    // The driver reports filesystem isolation, so Nomad wrote the paths a
    // task sees in its own root; on the host's root they are these.
    rewriteForHostRoot(out.env, HostDirs{d.shared, d.local, d.secrets});
    return {};
}

Result<void> addNetwork(const pb::TaskConfig& cfg, spec::TaskSpec& out) {
    if (!cfg.has_network_isolation_spec()) return {};
    const auto& n = cfg.network_isolation_spec();
    switch (n.mode()) {
        case pb::NetworkIsolationSpec::HOST:
            return {};
        case pb::NetworkIsolationSpec::GROUP:
            // The only namespace a task can join is its allocation's, made
            // by CreateNetwork; another path is someone else's namespace.
            if (n.path() != allocNetnsPath(cfg.alloc_id()))
                return invalid("network namespace " + n.path() + " is not allocation " + cfg.alloc_id() +
                               "'s (" + allocNetnsPath(cfg.alloc_id()) + ")");
            out.network = spec::NetworkNamespace::Alloc;
            return {};
        default:
            return invalid("network isolation mode " + pb::NetworkIsolationSpec::NetworkIsolationMode_Name(n.mode()) +
                           " is not supported (host or group)");
    }
}

}  // namespace

std::string allocNetnsPath(const std::string& allocId) { return "/run/netns/" + allocId; }

Result<TaskKey> taskKey(const pb::TaskConfig& cfg) {
    if (cfg.alloc_id().empty()) return invalid("the task has no alloc_id");
    if (cfg.name().empty()) return invalid("the task has no name");
    return TaskKey{cfg.alloc_id(), cfg.name()};
}

Result<json> buildTaskSpec(const pb::TaskConfig& cfg, const DriverConfig& driver) {
    auto config = decodeCty(cfg.msgpack_driver_config());
    if (!config) return config.error().context("decode the task's config");
    // The node's keys (ulimit, oom_score_adj, IO limits: node_task_config)
    // are read apart from exec's and raw_exec's (task_config).
    json execKeys = json::object(), nodeKeys = json::object();
    if (config->is_object())
        for (const auto& [key, value] : config->items()) (isNodeTaskKey(key) ? nodeKeys : execKeys)[key] = value;
    else
        execKeys = *config;
    auto block = parseTaskBlock(execKeys);
    if (!block) return block.error();
    if (!block->cgroupV2Override.empty()) return invalid(std::string("config.cgroup_v2_override") + kCgroupOverrideWhy);
    if (block->cgroupV1Override) return invalid(std::string("config.cgroup_v1_override") + kCgroupOverrideWhy);
    // The typed task, filled here and serialized by its one converter.
    spec::TaskSpec task;
    task.command = block->command;
    task.args = block->args;
    for (const auto& [k, v] : cfg.env()) task.env[k] = v;
    const auto fs = block->isolation.value_or(driver.defaultIsolation);
    if (auto id = dynamicUserId(cfg.user())) {
        task.user = *id;
        task.group = *id;
    } else if (!cfg.user().empty()) {
        task.user = cfg.user();
    } else {
        // No user (dynamic workload users off): as exec and raw_exec run
        // it, nobody in its own root (exec's StartTask), the agent's user,
        // root, on the host's (raw_exec: users.Current()).
        task.user = fs == FsMode::Chroot ? spec::kDefaultIsolatedUser : spec::kDefaultUser;
    }
    task.deniedUids = driver.deniedHostUids;
    task.deniedGids = driver.deniedHostGids;
    if (auto r = fs == FsMode::Chroot ? addChroot(cfg, *block, driver, task) : addHostRoot(cfg, *block, task); !r)
        return r.error();
    // raw_exec's buildEnvList: the plugin's and the task's lists together.
    removeDenied(task.env, driver.deniedEnvvars);
    removeDenied(task.env, block->deniedEnvvars);
    if (auto r = addNetwork(cfg, task); !r) return r.error();
    addNetworkFiles(cfg, fs == FsMode::Chroot, task);
    task.stdoutPath = cfg.stdout_path();
    task.stderrPath = cfg.stderr_path();
    // With the journal on, taskscope's streamer reads the task's output and
    // writes Nomad's fifos itself, copying to the journal on the way.
    task.logJournal = block->logJournal;
    if (cfg.has_resources()) {
        auto res = resources(cfg.resources());
        if (!res) return res.error();
        task.resources = std::move(*res);
    }
    // After Nomad's resources, which they add to (io_weight, the IO limits).
    for (const auto& [key, value] : nodeKeys.items())
        if (!value.is_null())
            if (auto r = addNodeTaskKey(key, value, task); !r) return r.error();
    return spec::toJson(task);
}

std::string encodeDriverState(const TaskKey& key) {
    return json{{"alloc_id", key.allocId}, {"task", key.task}}.dump();
}

Result<TaskKey> decodeDriverState(const std::string& bytes) {
    const json j = json::parse(bytes, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("alloc_id") || !j.contains("task") ||
        !j["alloc_id"].is_string() || !j["task"].is_string())
        return invalid("driver_state is not a taskscope handle");
    return TaskKey{j["alloc_id"].get<std::string>(), j["task"].get<std::string>()};
}

}  // namespace taskscope::nomad
