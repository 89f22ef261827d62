#include "nomad/task_spec_builder.hpp"

#include <algorithm>

#include "nomad/cty_msgpack.hpp"

namespace taskscope::nomad {

namespace {

using common::makeError;
using common::Result;
using nlohmann::json;
namespace pb = hashicorp::nomad::plugins::drivers::proto;

common::Error invalid(const std::string& message) { return makeError("InvalidConfig", message); }

// Nomad allows shares down to 0 and up to the node's MHz; cgroup v1
// shares, which taskscope takes, are 2..262144.
int64_t clampShares(int64_t shares) { return std::clamp<int64_t>(shares, 2, 262144); }

Result<void> addDriverConfig(const json& config, json& spec) {
    if (!config.is_object()) return invalid("the task's config block must be an object");
    for (const auto& [key, value] : config.items()) {
        if (value.is_null()) continue;  // an optional attribute the job left out
        if (key == "command") {
            if (!value.is_string() || value.get<std::string>().empty())
                return invalid("config.command must be a non-empty string");
            spec["command"] = value;
        } else if (key == "args") {
            if (!value.is_array()) return invalid("config.args must be a list of strings");
            for (const auto& a : value)
                if (!a.is_string()) return invalid("config.args must be a list of strings");
            spec["args"] = value;
        } else {
            return invalid("unknown attribute config." + key);
        }
    }
    if (!spec.contains("command")) return invalid("config.command is required");
    return {};
}

json resources(const pb::Resources& r) {
    json out = json::object();
    const auto& alloc = r.allocated_resources();
    if (alloc.memory().memory_mb() > 0) out["memory_mb"] = alloc.memory().memory_mb();
    if (alloc.memory().memory_max_mb() > alloc.memory().memory_mb()) out["memory_max_mb"] = alloc.memory().memory_max_mb();
    if (alloc.cpu().cpu_shares() > 0)
        out["cpu_shares"] = clampShares(alloc.cpu().cpu_shares());
    else if (r.linux_resources().cpu_shares() > 0)
        out["cpu_shares"] = clampShares(r.linux_resources().cpu_shares());
    if (!r.linux_resources().cpuset_cpus().empty()) out["cpuset"] = r.linux_resources().cpuset_cpus();
    return out;
}

}  // namespace

Result<TaskKey> taskKey(const pb::TaskConfig& cfg) {
    if (cfg.alloc_id().empty()) return invalid("the task has no alloc_id");
    if (cfg.name().empty()) return invalid("the task has no name");
    return TaskKey{cfg.alloc_id(), cfg.name()};
}

Result<json> buildTaskSpec(const pb::TaskConfig& cfg) {
    auto config = decodeCty(cfg.msgpack_driver_config());
    if (!config) return config.error().context("decode the task's config");
    json spec = json::object();
    if (auto r = addDriverConfig(*config, spec); !r) return r.error();
    json env = json::object();
    for (const auto& [k, v] : cfg.env()) env[k] = v;
    if (!env.empty()) spec["env"] = std::move(env);
    if (!cfg.user().empty()) spec["user"] = cfg.user();
    // Nomad's task directory, as raw_exec runs in it (no filesystem
    // isolation yet: the host's root, the task dir as working directory).
    if (!cfg.alloc_dir().empty()) spec["cwd"] = cfg.alloc_dir() + "/" + cfg.name();
    if (!cfg.stdout_path().empty()) spec["stdout_path"] = cfg.stdout_path();
    if (!cfg.stderr_path().empty()) spec["stderr_path"] = cfg.stderr_path();
    if (cfg.has_resources()) {
        auto res = resources(cfg.resources());
        if (!res.empty()) spec["resources"] = std::move(res);
    }
    return spec;
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
