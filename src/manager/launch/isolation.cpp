// A spec's isolation resolved against the node's config (isolation.hpp),
// and the shim's options that carry it: isolation, devices, net files,
// limits.
#include "manager/launch/isolation.hpp"

#include <array>
#include <cstdio>

#include "spec/json.hpp"
#include "spec/task_limits.hpp"

extern "C" {
#include "shim/shim_protocol.h"
}

// The shim's range is the spec's: the kernel's one (shim_protocol.h says why
// it spells it).
static_assert(SHIM_OOM_SCORE_ADJ_MIN == taskscope::spec::kOomScoreAdjMin &&
              SHIM_OOM_SCORE_ADJ_MAX == taskscope::spec::kOomScoreAdjMax);

namespace taskscope::manager {

namespace {

using common::Result;

const char* propagationWord(spec::Propagation p) {
    switch (p) {
        case spec::Propagation::HostToTask: return SHIM_PROP_HOST_TO_TASK;
        case spec::Propagation::Bidirectional: return SHIM_PROP_BIDIRECTIONAL;
        case spec::Propagation::Private: break;
    }
    return SHIM_PROP_PRIVATE;
}

}  // namespace

uint64_t defaultCapabilities() { return spec::nomadDefaultCapabilityBits(); }

IsolationConfig::IsolationConfig() : allowedCaps(defaultCapabilities()) {}

spec::Isolation effectiveIsolation(const spec::Isolation& asked, bool given, const IsolationConfig& node) {
    spec::Isolation iso = asked;
    if (!given && node.defaultIsolated) iso.filesystem = true;
    return iso;
}

Result<void> resolveIsolation(spec::Isolation& iso, const IsolationConfig& node, const std::string& defaultTaskDir) {
    if (!iso.filesystem) {
        // Only the bounding set: every capability but the dropped ones.
        uint64_t bound = iso.capDropAll ? 0 : ~uint64_t{0};
        for (int c : iso.capDrop) bound &= ~(uint64_t{1} << c);
        iso.caps = bound;
        return {};
    }
    for (int c : iso.capAdd)
        if (!(node.allowedCaps & (uint64_t{1} << c)))
            return spec::invalid("isolation.cap_add: capability " + spec::capabilityName(c) +
                                 " is not in the node's allowed_capabilities");
    uint64_t caps = iso.capDropAll ? 0 : (defaultCapabilities() & node.allowedCaps);
    for (int c : iso.capAdd) caps |= uint64_t{1} << c;
    for (int c : iso.capDrop) caps &= ~(uint64_t{1} << c);
    iso.caps = caps;
    if (!iso.chrootEnv) iso.chrootEnv = node.chrootEnv;
    if (iso.taskDir.empty()) {
        iso.taskDir = defaultTaskDir;
        iso.taskDirMade = true;
    }
    return {};
}

std::vector<std::string> shimIsolationArgs(const spec::Isolation& iso) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(iso.caps));
    if (!iso.filesystem) {
        std::vector<std::string> a;
        if (iso.capDropAll || !iso.capDrop.empty()) a.insert(a.end(), {SHIM_OPT_CAP_BOUND, hex});
        if (iso.noNewPrivs) a.insert(a.end(), {SHIM_OPT_NO_NEW_PRIVS, "1"});
        return a;
    }
    std::vector<std::string> a = {SHIM_OPT_ROOT, iso.taskDir};
    for (const auto& p : *iso.chrootEnv) a.insert(a.end(), {SHIM_OPT_RO_BIND, p});
    if (!iso.allocDir.empty()) a.insert(a.end(), {SHIM_OPT_ALLOC_DIR, iso.allocDir});
    for (const auto& v : iso.volumes)
        a.insert(a.end(), {SHIM_OPT_VOLUME, v.source, v.target,
                           std::string(v.readOnly ? SHIM_VOL_RO : SHIM_VOL_RW) + "," + propagationWord(v.propagation)});
    a.insert(a.end(), {SHIM_OPT_PID_NS, iso.pidHost ? SHIM_NS_HOST : SHIM_NS_PRIVATE});
    a.insert(a.end(), {SHIM_OPT_IPC_NS, iso.ipcHost ? SHIM_NS_HOST : SHIM_NS_PRIVATE});
    a.insert(a.end(), {SHIM_OPT_CAPS, hex});
    if (iso.noNewPrivs) a.insert(a.end(), {SHIM_OPT_NO_NEW_PRIVS, "1"});
    a.insert(a.end(), {SHIM_OPT_SECRETS_SIZE, std::to_string(iso.secretsSizeBytes)});
    if (!iso.secretsDir.empty()) a.insert(a.end(), {SHIM_OPT_SECRETS_DIR, iso.secretsDir});
    return a;
}

std::vector<std::string> shimDeviceArgs(const spec::TaskSpec& spec) {
    std::vector<std::string> a;
    if (!spec.isolation.filesystem) return a;
    for (const auto& d : spec.devices) a.insert(a.end(), {SHIM_OPT_DEVICE, d.hostPath, d.seenAt()});
    return a;
}

std::vector<std::string> shimNetFileArgs(const spec::TaskSpec& spec, const std::string& hostResolvConf) {
    std::vector<std::string> a;
    if (!spec.isolation.filesystem) return a;
    if (spec.dns && !spec.dns->empty()) {
        const auto dns = spec::completedDns(*spec.dns, hostResolvConf);
        for (const auto& s : dns.servers) a.insert(a.end(), {SHIM_OPT_DNS_SERVER, s});
        for (const auto& s : dns.searches) a.insert(a.end(), {SHIM_OPT_DNS_SEARCH, s});
        for (const auto& s : dns.options) a.insert(a.end(), {SHIM_OPT_DNS_OPTION, s});
    }
    if (spec.hosts) a.insert(a.end(), {SHIM_OPT_HOSTS, spec.hosts->hostname, spec.hosts->address});
    return a;
}

std::vector<std::string> shimLimitArgs(const spec::TaskSpec& spec) {
    std::vector<std::string> a = {SHIM_OPT_OOM_SCORE_ADJ, std::to_string(spec.oomScoreAdj)};
    const auto value = [](uint64_t v) {
        return v == spec::kUnlimited ? std::string(SHIM_RLIMIT_INFINITY) : std::to_string(v);
    };
    for (const auto& [name, limit] : spec.ulimits)
        a.insert(a.end(),
                 {SHIM_OPT_RLIMIT, std::to_string(spec::ulimitResource(name)), value(limit.soft), value(limit.hard)});
    return a;
}

}  // namespace taskscope::manager
