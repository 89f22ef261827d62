#include "nomad/task_spec_builder.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "common/cpu_list.hpp"
#include "nomad/cty_msgpack.hpp"
#include "nomad/node_task_config.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::nomad {

namespace {

using common::makeError;
using common::Result;
using nlohmann::json;
namespace pb = hashicorp::nomad::plugins::drivers::proto;

common::Error invalid(const std::string& message) { return makeError("InvalidConfig", message); }

// Nomad allows shares down to 0 and up to the node's MHz; cgroup v1
// shares, which taskscope takes, are spec::kCpuSharesMin..kCpuSharesMax.
int64_t clampShares(int64_t shares) {
    return std::clamp<int64_t>(shares, spec::kCpuSharesMin, spec::kCpuSharesMax);
}

Result<void> addDriverConfig(const json& config, spec::TaskSpec& out, std::optional<FsMode>& isolation) {
    if (!config.is_object()) return invalid("the task's config block must be an object");
    for (const auto& [key, value] : config.items()) {
        if (value.is_null()) continue;  // an optional attribute the job left out
        if (key == "command") {
            if (!value.is_string() || value.get<std::string>().empty())
                return invalid("config.command must be a non-empty string");
            out.command = value.get<std::string>();
        } else if (key == "args") {
            if (!value.is_array()) return invalid("config.args must be a list of strings");
            for (const auto& a : value)
                if (!a.is_string()) return invalid("config.args must be a list of strings");
            out.args = value.get<std::vector<std::string>>();
        } else if (key == "isolation") {
            if (!value.is_string()) return invalid("config.isolation must be \"chroot\" or \"none\"");
            auto m = parseFsMode(value.get<std::string>());
            if (!m) return m.error().context("config.isolation");
            isolation = *m;
        } else if (isNodeTaskKey(key)) {
            // --- the node's keys (issue 47: ulimit, oom_score_adj, IO): node_task_config.hpp
            if (auto r = addNodeTaskKey(key, value, out); !r) return r;
        } else {
            return invalid("unknown attribute config." + key);
        }
    }
    if (out.command.empty()) return invalid("config.command is required");
    return {};
}

Result<spec::Resources> resources(const pb::Resources& r) {
    spec::Resources out;
    const auto& alloc = r.allocated_resources();
    if (alloc.memory().memory_mb() > 0) out.memoryMb = alloc.memory().memory_mb();
    if (alloc.memory().memory_max_mb() > alloc.memory().memory_mb()) out.memoryMaxMb = alloc.memory().memory_max_mb();
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

Result<void> addChroot(const pb::TaskConfig& cfg, spec::TaskSpec& out) {
    // Nomad's device plugins' devices, bound into the task's /dev and
    // allowed in its scope (issue 47), as exec binds and allows them.
    if (auto r = addNomadDevices(cfg, true, out); !r) return r;
    spec::Isolation iso;
    iso.filesystem = true;
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

Result<void> addHostRoot(const pb::TaskConfig& cfg, spec::TaskSpec& out) {
    if (cfg.mounts_size() > 0)
        return invalid("mounts need isolation = \"chroot\": on the host's root there is nothing to bind into");
    if (auto r = addNomadDevices(cfg, false, out); !r) return r;
    // Said explicitly: a node whose manager isolates specs without an
    // isolation object (default_isolated) must still run this task on the
    // host's root, as the job asked.
    out.isolation = spec::Isolation{};
    out.isolation.filesystem = false;
    out.isolationGiven = true;
    if (cfg.alloc_dir().empty()) return {};
    const auto d = nomadDirs(cfg);
    out.cwd = d.task;
    // The driver reports filesystem isolation, so Nomad wrote the paths a
    // task sees in its own root (/alloc, /local, /secrets); on the host's
    // root they are these.
    const std::pair<const char*, const std::string*> dirs[] = {
        {"NOMAD_ALLOC_DIR", &d.shared}, {"NOMAD_TASK_DIR", &d.local}, {"NOMAD_SECRETS_DIR", &d.secrets}};
    for (const auto& [name, path] : dirs)
        if (auto it = out.env.find(name); it != out.env.end()) it->second = *path;
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

Result<FsMode> parseFsMode(const std::string& text) {
    if (text == "chroot") return FsMode::Chroot;
    if (text == "none") return FsMode::None;
    return invalid("isolation must be \"chroot\" or \"none\", not \"" + text + "\"");
}

std::string allocNetnsPath(const std::string& allocId) { return "/run/netns/" + allocId; }

Result<TaskKey> taskKey(const pb::TaskConfig& cfg) {
    if (cfg.alloc_id().empty()) return invalid("the task has no alloc_id");
    if (cfg.name().empty()) return invalid("the task has no name");
    return TaskKey{cfg.alloc_id(), cfg.name()};
}

Result<json> buildTaskSpec(const pb::TaskConfig& cfg, const DriverConfig& driver) {
    auto config = decodeCty(cfg.msgpack_driver_config());
    if (!config) return config.error().context("decode the task's config");
    // The typed task, filled here and serialized by its one converter.
    spec::TaskSpec task;
    std::optional<FsMode> isolation;
    if (auto r = addDriverConfig(*config, task, isolation); !r) return r.error();
    for (const auto& [k, v] : cfg.env()) task.env[k] = v;
    if (!cfg.user().empty()) task.user = cfg.user();
    const auto fs = isolation.value_or(driver.defaultIsolation);
    if (auto r = fs == FsMode::Chroot ? addChroot(cfg, task) : addHostRoot(cfg, task); !r) return r.error();
    if (auto r = addNetwork(cfg, task); !r) return r.error();
    addNetworkFiles(cfg, fs == FsMode::Chroot, task);
    task.stdoutPath = cfg.stdout_path();
    task.stderrPath = cfg.stderr_path();
    if (cfg.has_resources()) {
        auto res = resources(cfg.resources());
        if (!res) return res.error();
        task.resources = std::move(*res);
    }
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
