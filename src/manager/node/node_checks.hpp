#pragma once
// What a task asks of the node checked against what the node has, before
// anything of its start is made (issue 47): its devices exist, its IO
// limits have a controller that applies them, its rlimits are within what
// the kernel takes. Pure over NodeLimits and a stat function, so the rules
// are unit-tested; NodeLimits::detect reads the node once, at startup.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/result.hpp"
#include "scope/cgroup_host.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::manager {

struct NodeLimits {
    bool unified = true;  ///< cgroup v2
    /// v2: "io" in the root's cgroup.controllers; v1: a blkio hierarchy.
    bool ioController = true;
    /// fs.nr_open: the highest RLIMIT_NOFILE the kernel takes (setrlimit
    /// fails with EPERM above it, even for root).
    uint64_t nrOpen = 1024 * 1024;

    /// Read from the running system (a few small files, once).
    static NodeLimits detect(const scope::CgroupHost& host, const std::string& proc = "/proc");
};

/// The kind of file at a path, or nullopt when there is none (stat(2)).
using FileKind = std::function<std::optional<mode_t>(const std::string& path)>;
/// stat(2) of a path, its S_IFMT bits.
std::optional<mode_t> statKind(const std::string& path);

/// Devices: NoSuchDevice when a host path is not a character or block
/// device node. IO: NoSuchDevice when a limited device is not a block
/// device; NotSupported when the node has no controller to apply a limit
/// (cgroup v1: systemd applies IOWeight= and the bandwidth limits through
/// blkio, not the IOPS limits). Ulimits: InvalidSpec above fs.nr_open.
/// Each message names the spec's key.
common::Result<void> checkTaskOnNode(const spec::TaskSpec& spec, const NodeLimits& node,
                                     const FileKind& kind = statKind);

/// The IO part alone (UpdateTask's resources).
common::Result<void> checkIoOnNode(const spec::Resources& resources, const NodeLimits& node,
                                   const FileKind& kind = statKind);

}  // namespace taskscope::manager
