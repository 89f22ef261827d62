// The running systemd's version and cgroup hierarchy checked against what
// the manager needs (systemd_support.hpp), and the calls it may use.
#include "manager/daemon/systemd_support.hpp"

#include <cctype>

#include "common/error_names.hpp"

namespace taskscope::manager {

std::optional<int> systemdMajor(const std::string& version) {
    size_t i = 0;
    while (i < version.size() && !std::isdigit(static_cast<unsigned char>(version[i]))) ++i;
    if (i == version.size()) return std::nullopt;
    int major = 0;
    for (; i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])); ++i) {
        major = major * 10 + (version[i] - '0');
        if (major > 100000) return std::nullopt;
    }
    return major;
}

bool systemdTakesPidfds(const std::string& version) {
    const auto major = systemdMajor(version);
    return major && *major >= kSystemdWithPidfds;
}

common::Result<void> checkSystemdSupport(const std::string& version, bool unified) {
    const auto major = systemdMajor(version);
    if (!major) return {};
    if (*major < kOldestSystemd)
        return common::makeError(common::errors::kNotSupported,
                                 "systemd " + version + " is older than " + std::to_string(kOldestSystemd) +
                                     ", the oldest taskscope runs on (transient scopes with AllowedCPUs, "
                                     "OOMPolicy and cgroup.kill through KillUnit are missing or unproven there)");
    if (!unified && *major >= kSystemdWithoutV1)
        return common::makeError(
            common::errors::kNotSupported,
            "systemd " + version + " no longer manages cgroup v1 (removed in " + std::to_string(kSystemdWithoutV1) +
                ") and this node is booted on the legacy or hybrid hierarchy: boot it with cgroup v2 "
                "(systemd.unified_cgroup_hierarchy=1) for taskscope to run");
    return {};
}

}  // namespace taskscope::manager
