#pragma once
// What a task asks of the node beyond its cgroup limits (issue 47): the
// rlimits it starts with (`ulimits`, docker's map), its OOM score
// adjustment, and the host devices it is given. Pure: the spec's tables
// (task_spec_json.cpp) read and write them with these; the manager turns
// them into shim options (rlimits, oom_score_adj, device binds) and unit
// properties (DeviceAllow=).

#include <linux/oom.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "common/result.hpp"
#include "spec/json.hpp"

namespace taskscope::spec {

/// RLIM_INFINITY as a spec holds it ("unlimited").
inline constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();

struct Ulimit {
    uint64_t soft = 0;
    uint64_t hard = 0;

    bool operator==(const Ulimit&) const = default;
};

/// docker's ulimit names (`docker run --ulimit`, daemon.json's
/// default-ulimits): "nofile" -> RLIMIT_NOFILE; -1 when unknown.
int ulimitResource(const std::string& name);
/// The names ulimitResource knows, comma-separated, for messages.
std::string ulimitNames();

/// "SOFT:HARD" or "N" (both), each a decimal number or "unlimited"
/// (docker's form, and `ulimit -n unlimited`'s word). Message on error
/// ("soft limit 10 is above hard limit 5"), without the key: the caller
/// names it.
common::Result<Ulimit> parseUlimit(const std::string& text);
/// The canonical "SOFT:HARD".
std::string formatUlimit(const Ulimit& limit);
/// docker's ulimit map ({"nofile": "65536:65536", "core": "0"}), read entry
/// by entry with ulimitResource and parseUlimit: the one reader of it, for
/// the spec's `ulimits` and the Nomad driver's `ulimit` key. InvalidSpec
/// naming `at` and the entry ("ulimits.nofile: soft limit 10 is above hard
/// limit 5", "ulimits: unknown limit 'x' (core, ...)"). `limits` must be
/// an object: the caller says so in its input's words (a JSON object, an
/// HCL map).
common::Result<std::map<std::string, Ulimit>> readUlimits(const Json& limits, const std::string& at);

/// The kernel's range of oom_score_adj, from the kernel's own header (the
/// shim's, which musl cannot include, are checked against these in
/// manager/launch/isolation.cpp).
inline constexpr int kOomScoreAdjMin = OOM_SCORE_ADJ_MIN;
inline constexpr int kOomScoreAdjMax = OOM_SCORE_ADJ_MAX;

/// A host device given to the task (Nomad's DeviceConfig).
struct Device {
    std::string hostPath;             ///< a device node under /dev on the host
    std::string taskPath;             ///< where an isolated task sees it; empty: hostPath
    std::string permissions = "rwm";  ///< the cgroup's: r, w, m

    /// Where the task sees it.
    const std::string& seenAt() const { return taskPath.empty() ? hostPath : taskPath; }
    bool operator==(const Device&) const = default;
};

/// What DeviceAllow= takes: a non-empty combination of r, w and m, each once.
bool validDevicePermissions(const std::string& p);
/// A path systemd's DeviceAllow= and IO*Max= properties take, and the
/// shim binds: clean, absolute and under /dev/ (systemd's
/// valid_device_node_path() also allows /sys/, which holds no nodes).
bool isDevicePath(const std::string& p);

}  // namespace taskscope::spec
