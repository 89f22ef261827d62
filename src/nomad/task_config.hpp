#pragma once
// A task's config block (the job's `config { ... }` under driver =
// "taskscope"), typed and validated: a superset of the task config of
// Nomad's exec and raw_exec drivers, each key with the meaning it has
// there, plus taskscope's `isolation`. The keys are one table
// (taskConfigKeys), which both parseTaskBlock and the schema Nomad is sent
// (plugin_facts.cpp taskConfigSchema, with the node's keys) read;
// task_spec_builder maps the block to a task spec. Pure.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "nomad/driver_config.hpp"
#include "nomad/hcl_block.hpp"

namespace taskscope::nomad {

struct TaskBlock {
    std::string command;                  ///< exec, raw_exec: required
    std::vector<std::string> args;        ///< exec, raw_exec
    std::optional<FsMode> isolation;      ///< taskscope's; unset: the plugin's default_isolation
    std::optional<bool> pidHost;          ///< exec's pid_mode ("private"/"host"); unset: default_pid_mode
    std::optional<bool> ipcHost;          ///< exec's ipc_mode; unset: default_ipc_mode
    CapSet capAdd = 0;                    ///< exec's cap_add
    CapSet capDrop = 0;                   ///< exec's cap_drop
    bool capDropAll = false;              ///< cap_drop said "all"
    std::string workDir;                  ///< exec's and raw_exec's work_dir (absolute)
    std::string cgroupV2Override;         ///< raw_exec's: decoded, refused at start
    bool cgroupV1Override = false;        ///< raw_exec's cgroup_v1_override given (non-empty): refused at start
    std::vector<std::string> deniedEnvvars;  ///< raw_exec's task-level denied_envvars (globs)
    /// taskscope's log_journal: the spec's (unset: the node's default).
    std::optional<bool> logJournal;
};

/// The block's keys (exec's, raw_exec's, taskscope's isolation), each with
/// its HCL type: what taskConfigSchema tells Nomad and what parseTaskBlock
/// reads. The node's keys are node_task_config's.
const std::vector<hclblock::Key<TaskBlock>>& taskConfigKeys();

/// The decoded block (the cty value as JSON; null attributes are ones the
/// job left out). InvalidConfig naming `config.<key>` for an unknown key
/// or a bad value, as exec's and raw_exec's TaskConfig.validate at
/// StartTask: pid_mode/ipc_mode not "private"/"host", an unknown
/// capability, a relative work_dir, both cgroup overrides.
common::Result<TaskBlock> parseTaskBlock(const nlohmann::json& config);

}  // namespace taskscope::nomad
