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

/// Filesystem isolation of a task: `chroot` runs it in its own root made
/// of Nomad's task dir (taskscope's spec `isolation`, issue 14), `none`
/// on the host's root like raw_exec.
enum class FsMode { None, Chroot };

/// The plugin block's settings that shape a task's spec.
struct DriverConfig {
    FsMode defaultIsolation = FsMode::Chroot;  ///< for a task whose config says nothing
};

/// "chroot" / "none"; InvalidConfig otherwise.
common::Result<FsMode> parseFsMode(const std::string& text);

/// The key of a TaskConfig; InvalidConfig when alloc_id or name is empty.
common::Result<TaskKey> taskKey(const hashicorp::nomad::plugins::drivers::proto::TaskConfig& cfg);

/// The spec: the task block's `command` and `args` (msgpack_driver_config),
/// Nomad's env and user, memory_mb and memory_max_mb, cpu_shares, the
/// cores Nomad reserved (cpuset_cpus) as an explicit cpuset, and
/// stdout_path/stderr_path (Nomad's log fifos).
/// Filesystem (the block's `isolation`, else the driver's default):
/// chroot maps Nomad's task dir, shared alloc dir, secrets dir and
/// `mounts` to the spec's `isolation`; none runs in the task dir on the
/// host's root, with NOMAD_*_DIR pointed at the host paths. Network: a
/// GROUP network_isolation_spec whose path is the allocation's namespace
/// (/run/netns/<alloc_id>, as CreateNetwork returned it) joins it.
/// Devices (Nomad's device plugins') become the spec's devices; the
/// node's keys (ulimit, oom_score_adj, IO limits) node_task_config.hpp's.
/// InvalidConfig for a config block that does not fit the task schema,
/// or for what taskscope cannot give (a device away from its host path
/// or mounts without a chroot, another namespace path, TASK or NONE
/// network modes).
common::Result<nlohmann::json> buildTaskSpec(const hashicorp::nomad::plugins::drivers::proto::TaskConfig& cfg,
                                             const DriverConfig& driver = {});

/// The namespace file taskscope gives an allocation's network.
std::string allocNetnsPath(const std::string& allocId);

/// The TaskHandle's driver_state: what RecoverTask needs to find the task.
std::string encodeDriverState(const TaskKey& key);
common::Result<TaskKey> decodeDriverState(const std::string& bytes);

}  // namespace taskscope::nomad
