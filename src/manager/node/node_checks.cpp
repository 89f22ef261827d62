// A start's asks checked against the node (node_checks.hpp): devices, IO
// controllers, rlimits and fs.nr_open, as NodeLimits::detect found them.
#include "manager/node/node_checks.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "common/error_names.hpp"

namespace taskscope::manager {

namespace {

using common::makeError;
using common::Result;

std::string readFirstLine(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

Result<void> checkDevices(const spec::TaskSpec& spec, const FileKind& kind) {
    for (size_t i = 0; i < spec.devices.size(); ++i) {
        const auto& d = spec.devices[i];
        const auto at = "devices[" + std::to_string(i) + "].host_path";
        const auto k = kind(d.hostPath);
        if (!k)
            return makeError(common::errors::kNoSuchDevice, at + ": " + d.hostPath + " does not exist on this node");
        if (!S_ISCHR(*k) && !S_ISBLK(*k))
            return makeError(common::errors::kNoSuchDevice, at + ": " + d.hostPath + " is not a device node");
    }
    return {};
}

}  // namespace

std::optional<mode_t> statKind(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return st.st_mode & S_IFMT;
}

NodeLimits NodeLimits::detect(const scope::CgroupHost& host, const std::string& proc) {
    NodeLimits f;
    f.unified = host.unified();
    f.ioController = host.hasController("io", "blkio");
    const auto nr = readFirstLine(proc + "/sys/fs/nr_open");
    if (!nr.empty()) f.nrOpen = std::stoull(nr);
    return f;
}

Result<void> checkIoOnNode(const spec::Resources& r, const NodeLimits& node, const FileKind& kind) {
    const std::pair<const char*, const spec::IoDeviceLimits*> limits[] = {
        {"io_read_bps", &r.ioReadBps},
        {"io_write_bps", &r.ioWriteBps},
        {"io_read_iops", &r.ioReadIops},
        {"io_write_iops", &r.ioWriteIops},
    };
    const auto controller = node.unified ? "the io controller, which this node's cgroup v2 root does not offer"
                                         : "the blkio controller, which this node's cgroup v1 does not mount";
    if (r.ioWeight && !node.ioController)
        return makeError(common::errors::kNotSupported, "resources.io_weight needs " + std::string(controller));
    for (const auto& [key, map] : limits) {
        if (map->empty()) continue;
        const std::string at = std::string("resources.") + key;
        if (!node.ioController) return makeError(common::errors::kNotSupported, at + " needs " + controller);
        // systemd (cgroup.c, cgroup_context_apply, the BLKIO branch: read
        // in systemd-stable 047f6ff8, the same shape since v230) applies
        // IOWeight= as blkio.weight and IO*BandwidthMax= as blkio's
        // throttle on cgroup v1, and the IOPS limits not at all: refused
        // rather than accepted and silently dropped.
        if (!node.unified && std::string(key).ends_with("_iops"))
            return makeError(common::errors::kNotSupported,
                             at + ": on cgroup v1 systemd applies no IOPS limit (only io_weight and the _bps limits, "
                                  "through blkio)");
        for (const auto& [path, rate] : *map) {
            const auto k = kind(path);
            if (!k) return makeError(common::errors::kNoSuchDevice, at + ": " + path + " does not exist on this node");
            if (!S_ISBLK(*k))
                return makeError(common::errors::kNoSuchDevice, at + ": " + path + " is not a block device");
        }
    }
    return {};
}

Result<void> checkTaskOnNode(const spec::TaskSpec& spec, const NodeLimits& node, const FileKind& kind) {
    // Files of the task's own root: a task on the host's root has the
    // host's /etc (refused rather than silently not given).
    if (!spec.isolation.filesystem && (spec.dns || spec.hosts))
        return spec::invalid(std::string(spec.dns ? "dns" : "hosts") +
                             " needs an isolated task (a task on the host's root has the host's /etc)");
    if (auto r = checkDevices(spec, kind); !r) return r;
    if (auto r = checkIoOnNode(spec.resources, node, kind); !r) return r;
    if (auto it = spec.ulimits.find("nofile"); it != spec.ulimits.end() && it->second.hard > node.nrOpen)
        return spec::invalid(
            "ulimits.nofile: hard limit " +
            (it->second.hard == spec::kUnlimited ? std::string("unlimited") : std::to_string(it->second.hard)) +
            " is above this node's fs.nr_open (" + std::to_string(node.nrOpen) + "), the most the kernel takes");
    return {};
}

}  // namespace taskscope::manager
