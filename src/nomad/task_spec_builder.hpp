#pragma once
// Nomad's TaskConfig -> taskscope's task spec (the JSON StartTask takes).
// The border between the two APIs: what Nomad gives that taskscope takes
// is mapped here and nowhere else. Pure.

#include <nlohmann/json.hpp>

#include <string>

#include "common/result.hpp"
#include "driver.pb.h"
#include "nomad/driver_config.hpp"

namespace taskscope::nomad {

/// Which taskscope task a Nomad task is: (alloc_id, task name).
struct TaskKey {
    std::string allocId;
    std::string task;
};

/// The key of a TaskConfig; InvalidConfig when alloc_id or name is empty.
common::Result<TaskKey> taskKey(const hashicorp::nomad::plugins::drivers::proto::TaskConfig& cfg);

/// The spec: the task's config block (task_config.hpp) with the plugin
/// block's settings (driver_config.hpp), Nomad's env and user, memory_mb
/// and memory_max_mb (-1: no hard limit, memory the reservation), cpu_shares,
/// the cores Nomad reserved (cpuset_cpus) as an explicit cpuset, and
/// stdout_path/stderr_path (Nomad's log fifos).
/// User: a dynamic workload user "nomad-<id>" (Nomad's helper/users/
/// dynamic) becomes the numeric user and group <id>; an empty one is left
/// to the manager's default (nobody isolated, root on the host's root);
/// denied_host_uids/gids travel in the spec and are checked by the
/// manager against the resolved IDs.
/// Filesystem (the block's `isolation`, else the driver's default):
/// chroot maps Nomad's task dir, shared alloc dir, secrets dir, `mounts`,
/// pid/ipc modes, capabilities (exec's Calculate: defaults within
/// allow_caps, minus cap_drop, plus cap_add) and work_dir to the spec's
/// isolation; none runs in the task dir (or work_dir) on the host's root,
/// with NOMAD_*_DIR and NOMAD_UNIX_ADDR pointed at the host paths.
/// denied_envvars (plugin's and task's) leave the environment. Network: a
/// GROUP network_isolation_spec whose path is the allocation's namespace
/// (/run/netns/<alloc_id>, as CreateNetwork returned it) joins it.
/// Devices (Nomad's device plugins') become the spec's devices; the
/// node's keys (ulimit, oom_score_adj, IO limits) node_task_config.hpp's.
/// InvalidConfig for a config block that does not fit the task schema,
/// or for what taskscope cannot give (cgroup overrides, no_pivot_root with
/// chroot, devices in a chroot, mounts without one, namespaces or cap_add
/// on the host's root, a device away from its host path, another namespace path, TASK or NONE network modes),
/// each message naming the key.
common::Result<nlohmann::json> buildTaskSpec(const hashicorp::nomad::plugins::drivers::proto::TaskConfig& cfg,
                                             const DriverConfig& driver = {});

/// The namespace file taskscope gives an allocation's network.
std::string allocNetnsPath(const std::string& allocId);

/// The TaskHandle's driver_state: what RecoverTask needs to find the task.
std::string encodeDriverState(const TaskKey& key);
common::Result<TaskKey> decodeDriverState(const std::string& bytes);

}  // namespace taskscope::nomad
