// A task's config block read and checked through its key table
// (task_config.hpp).
#include "nomad/task_config.hpp"

#include <optional>

namespace taskscope::nomad {

namespace {

using common::Result;
using nlohmann::json;

using hclblock::invalid;

// exec's TaskConfig.validate: "" (unset), "private" or "host".
spec::Codec<std::optional<bool>> namespaceMode() {
    return spec::oneOf<std::optional<bool>>({{"", std::nullopt}, {"private", false}, {"host", true}});
}

// exec's and raw_exec's work_dir: absolute, or "" for the task dir.
std::optional<std::string> absoluteOrEmpty(const std::string& path) {
    if (path.empty() || path.front() == '/') return std::nullopt;
    return "must be an absolute path, not \"" + path + "\"";
}

std::optional<std::string> nonEmpty(const std::string& text) {
    if (!text.empty()) return std::nullopt;
    return "must be a non-empty string";
}

Result<void> capDrop(const json& v, TaskBlock& b, const std::string& at) {
    auto caps = parseCapList(v, at, &b.capDropAll);
    if (!caps) return caps.error();
    b.capDrop = *caps;
    return {};
}

Result<void> cgroupV1Override(const json& v, TaskBlock& b, const std::string& at) {
    // list(map(string)) in raw_exec's schema; Nomad decodes it into one map
    // (hclutils.MapStrStr). Any entry counts as set.
    if (!v.is_array() && !v.is_object()) return invalid(at + " must be a map of controller to cgroup");
    b.cgroupV1Override = false;
    for (const auto& e : v) b.cgroupV1Override = b.cgroupV1Override || !e.empty();
    return {};
}

}  // namespace

// The keys of Nomad's exec and raw_exec drivers' task config, as their
// taskConfigSpec declares them at Nomad commit
// aa026cc99cfb74a77e519a1c1f0c78ba1b452705 (2026-08-21;
// drivers/exec/driver.go, drivers/rawexec/driver.go), with the same
// types, so that a job's config block written for either decodes here
// unchanged; taskscope's own after them. raw_exec's oom_score_adj is the
// node's (node_task_config.cpp, issue 47 item 7).
const std::vector<hclblock::Key<TaskBlock>>& taskConfigKeys() {
    using hclblock::key;
    using hclblock::Need;
    static const std::vector<hclblock::Key<TaskBlock>> table = {
        // exec and raw_exec.
        key("command", "string", &TaskBlock::command, spec::text(nonEmpty), Need::Required),
        key("args", "list(string)", &TaskBlock::args, spec::texts()),
        key("work_dir", "string", &TaskBlock::workDir, spec::text(absoluteOrEmpty)),
        // exec.
        key("pid_mode", "string", &TaskBlock::pidHost, namespaceMode()),
        key("ipc_mode", "string", &TaskBlock::ipcHost, namespaceMode()),
        key("cap_add", "list(string)", &TaskBlock::capAdd, capListCodec()),
        {"cap_drop", "list(string)", capDrop},
        // raw_exec.
        key("cgroup_v2_override", "string", &TaskBlock::cgroupV2Override, spec::text()),
        {"cgroup_v1_override", "list(map(string))", cgroupV1Override},
        key("denied_envvars", "list(string)", &TaskBlock::deniedEnvvars, spec::texts()),
        // taskscope's.
        key("isolation", "string", &TaskBlock::isolation, fsModeCodec()),
        key("log_journal", "bool", &TaskBlock::logJournal, spec::boolean()),
    };
    return table;
}

Result<TaskBlock> parseTaskBlock(const json& config) {
    if (!config.is_object()) return invalid("the task's config block must be an object");
    TaskBlock out;
    if (auto r = hclblock::readBlock(taskConfigKeys(), config, out, "config.", "unknown attribute"); !r)
        return r.error();
    // raw_exec's TaskConfig.validate.
    if (out.cgroupV1Override && !out.cgroupV2Override.empty())
        return invalid("only one of config.cgroup_v1_override and config.cgroup_v2_override may be set");
    return out;
}

}  // namespace taskscope::nomad
