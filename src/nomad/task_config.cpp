#include "nomad/task_config.hpp"

#include <functional>

#include "nomad/config_values.hpp"

namespace taskscope::nomad {

namespace {

using common::Result;
using nlohmann::json;

using config::invalid;
using config::text;
using config::texts;

// exec's TaskConfig.validate: "" (unset), "private" or "host".
Result<std::optional<bool>> mode(const json& v, const std::string& at) {
    auto t = text(v, at);
    if (!t) return t.error();
    if (t->empty()) return std::optional<bool>{};
    if (*t == "private") return std::optional<bool>{false};
    if (*t == "host") return std::optional<bool>{true};
    return invalid(at + " must be \"private\" or \"host\", not \"" + *t + "\"");
}

struct TaskConfigKey {
    const char* name;
    std::function<Result<void>(const json&, TaskBlock&, const std::string& at)> read;
};

const std::vector<TaskConfigKey>& taskConfigKeys() {
    static const std::vector<TaskConfigKey> table = {
        {"command",
         [](const json& v, TaskBlock& b, const std::string& at) -> Result<void> {
             auto t = text(v, at);
             if (!t || t->empty()) return invalid(at + " must be a non-empty string");
             b.command = *t;
             return {};
         }},
        {"args",
         [](const json& v, TaskBlock& b, const std::string& at) -> Result<void> {
             auto t = texts(v, at);
             if (!t) return t.error();
             b.args = std::move(*t);
             return {};
         }},
        {"isolation",
         [](const json& v, TaskBlock& b, const std::string& at) -> Result<void> {
             if (!v.is_string()) return invalid(at + " must be \"chroot\" or \"none\"");
             auto m = parseFsMode(v.get<std::string>());
             if (!m) return m.error().context(at);
             b.isolation = *m;
             return {};
         }},
        {"pid_mode",
         [](const json& v, TaskBlock& b, const std::string& at) -> Result<void> {
             auto m = mode(v, at);
             if (!m) return m.error();
             b.pidHost = *m;
             return {};
         }},
        {"ipc_mode",
         [](const json& v, TaskBlock& b, const std::string& at) -> Result<void> {
             auto m = mode(v, at);
             if (!m) return m.error();
             b.ipcHost = *m;
             return {};
         }},
        {"cap_add",
         [](const json& v, TaskBlock& b, const std::string& at) -> Result<void> {
             auto caps = parseCapList(v, at);
             if (!caps) return caps.error();
             b.capAdd = *caps;
             return {};
         }},
        {"cap_drop",
         [](const json& v, TaskBlock& b, const std::string& at) -> Result<void> {
             auto caps = parseCapList(v, at, &b.capDropAll);
             if (!caps) return caps.error();
             b.capDrop = *caps;
             return {};
         }},
        {"work_dir",
         [](const json& v, TaskBlock& b, const std::string& at) -> Result<void> {
             auto t = text(v, at);
             if (!t) return t.error();
             if (!t->empty() && t->front() != '/')
                 return invalid(at + " must be an absolute path, not \"" + *t + "\"");
             b.workDir = *t;
             return {};
         }},
        {"cgroup_v2_override",
         [](const json& v, TaskBlock& b, const std::string& at) -> Result<void> {
             auto t = text(v, at);
             if (!t) return t.error();
             b.cgroupV2Override = *t;
             return {};
         }},
        {"cgroup_v1_override",
         [](const json& v, TaskBlock& b, const std::string& at) -> Result<void> {
             // list(map(string)) in raw_exec's schema; Nomad decodes it
             // into one map (hclutils.MapStrStr). Any entry counts as set.
             if (!v.is_array() && !v.is_object()) return invalid(at + " must be a map of controller to cgroup");
             b.cgroupV1Override = false;
             for (const auto& e : v) b.cgroupV1Override = b.cgroupV1Override || !e.empty();
             return {};
         }},
        {"denied_envvars",
         [](const json& v, TaskBlock& b, const std::string& at) -> Result<void> {
             auto t = texts(v, at);
             if (!t) return t.error();
             b.deniedEnvvars = std::move(*t);
             return {};
         }},
    };
    return table;
}

}  // namespace

Result<TaskBlock> parseTaskBlock(const json& config) {
    if (!config.is_object()) return invalid("the task's config block must be an object");
    TaskBlock out;
    for (const auto& [name, value] : config.items()) {
        const TaskConfigKey* k = nullptr;
        for (const auto& candidate : taskConfigKeys())
            if (name == candidate.name) k = &candidate;
        if (!k) return invalid("unknown attribute config." + name);
        if (value.is_null()) continue;  // an optional attribute the job left out
        if (auto r = k->read(value, out, "config." + name); !r) return r.error();
    }
    if (out.command.empty()) return invalid("config.command is required");
    // raw_exec's TaskConfig.validate.
    if (out.cgroupV1Override && !out.cgroupV2Override.empty())
        return invalid("only one of config.cgroup_v1_override and config.cgroup_v2_override may be set");
    return out;
}

}  // namespace taskscope::nomad
