#pragma once
// The driver's task-config keys for what a node gives a task beyond
// exec's and raw_exec's own keys (issue 47: what operators have long asked
// Nomad for: docker's --ulimit and --device-*-bps/iops, raw_exec's
// oom_score_adj, systemd's IOWeight=), and Nomad's devices: one table of
// keys (nodeTaskKeys: name, HCL type, reader into the spec), kept apart
// from exec's keys so that the schema's two halves are each read in one
// place. Pure, and without Nomad's protobuf types (what the TaskConfig
// message itself gives, devices and network files, is devices_network.hpp),
// so that the fuzz target node_task_keys links it alone.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "nomad/hcl_block.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::nomad {

/// The node's keys, each with its HCL type and what reads it into the
/// spec: the task config schema's second half (plugin_facts.cpp
/// taskConfigSchema) and addNodeTaskKey read this one table.
const std::vector<hclblock::Key<spec::TaskSpec>>& nodeTaskKeys();

/// Whether `key` is one of nodeTaskKeys.
bool isNodeTaskKey(const std::string& key);

/// Reads one node key's value into the spec (null: left out);
/// InvalidConfig naming "config.<key>" (and the map's entry) otherwise.
common::Result<void> addNodeTaskKey(const std::string& key, const nlohmann::json& value, spec::TaskSpec& out);

/// docker's byte sizes (go-units RAMInBytes): a number with an optional
/// binary suffix, k/kb, m/mb, g/gb, t/tb in any case: "10M" = 10485760.
common::Result<uint64_t> parseByteRate(const std::string& text);

}  // namespace taskscope::nomad
