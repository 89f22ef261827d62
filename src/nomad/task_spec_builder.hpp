#pragma once
// Nomad's TaskConfig -> taskscope's task spec (the JSON StartTask takes).
// The border between the two APIs: what Nomad gives that taskscope takes
// is mapped here and nowhere else. Pure.

#include <nlohmann/json.hpp>

#include <string>

#include "common/result.hpp"
#include "driver.pb.h"

namespace taskscope::nomad {

/// Which taskscope task a Nomad task is: (alloc_id, task name).
struct TaskKey {
    std::string allocId;
    std::string task;
};

/// The key of a TaskConfig; InvalidConfig when alloc_id or name is empty.
common::Result<TaskKey> taskKey(const hashicorp::nomad::plugins::drivers::proto::TaskConfig& cfg);

/// The spec: the task block's `command` and `args` (msgpack_driver_config),
/// Nomad's env and user, the task directory as cwd, memory_mb and
/// memory_max_mb, cpu_shares, the cores Nomad reserved (cpuset_cpus) as an
/// explicit cpuset, and stdout_path/stderr_path (Nomad's log fifos).
/// InvalidConfig for a config block that does not fit the task schema.
common::Result<nlohmann::json> buildTaskSpec(const hashicorp::nomad::plugins::drivers::proto::TaskConfig& cfg);

/// The TaskHandle's driver_state: what RecoverTask needs to find the task.
std::string encodeDriverState(const TaskKey& key);
common::Result<TaskKey> decodeDriverState(const std::string& bytes);

}  // namespace taskscope::nomad
