#include "manager/isolation.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>

extern "C" {
#include "shim/shim_protocol.h"
}

namespace taskscope::manager {

namespace {

using common::makeError;
using common::Result;
using nlohmann::json;

common::Error invalid(const std::string& message) { return makeError("InvalidSpec", message); }

// linux/capability.h, in number order (0..40).
constexpr std::array<const char*, 41> kCapNames = {
    "CHOWN",          "DAC_OVERRIDE",    "DAC_READ_SEARCH", "FOWNER",        "FSETID",
    "KILL",           "SETGID",          "SETUID",          "SETPCAP",       "LINUX_IMMUTABLE",
    "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN",       "NET_RAW",       "IPC_LOCK",
    "IPC_OWNER",      "SYS_MODULE",      "SYS_RAWIO",       "SYS_CHROOT",    "SYS_PTRACE",
    "SYS_PACCT",      "SYS_ADMIN",       "SYS_BOOT",        "SYS_NICE",      "SYS_RESOURCE",
    "SYS_TIME",       "SYS_TTY_CONFIG",  "MKNOD",           "LEASE",         "AUDIT_WRITE",
    "AUDIT_CONTROL",  "SETFCAP",         "MAC_OVERRIDE",    "MAC_ADMIN",     "SYSLOG",
    "WAKE_ALARM",     "BLOCK_SUSPEND",   "AUDIT_READ",      "PERFMON",       "BPF",
    "CHECKPOINT_RESTORE"};

constexpr std::array<const char*, 13> kNomadDefault = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
    "SETFCAP",     "SETGID", "SETPCAP",     "SETUID", "SYS_CHROOT"};

constexpr uint64_t kMaxSecretsBytes = uint64_t{1} << 30;

Result<bool> getBool(const json& v, const std::string& key) {
    if (!v.is_boolean()) return invalid(key + " must be true or false");
    return v.get<bool>();
}

Result<std::string> getPath(const json& v, const std::string& key) {
    if (!v.is_string()) return invalid(key + " must be a string");
    auto p = v.get<std::string>();
    if (!isCleanAbsolutePath(p)) return invalid(key + " '" + p + "' must be an absolute path without '..'");
    return p;
}

Result<bool> getNsMode(const json& v, const std::string& key) {
    if (v == "host") return true;
    if (v == "private") return false;
    return invalid(key + " must be \"private\" or \"host\"");
}

Result<void> getCaps(const json& v, const std::string& key, std::vector<int>& out, bool* all) {
    if (!v.is_array()) return invalid(key + " must be an array of capability names");
    for (const auto& c : v) {
        if (!c.is_string()) return invalid(key + " must be an array of capability names");
        const auto name = c.get<std::string>();
        if (all && (name == "ALL" || name == "all")) {
            *all = true;
            continue;
        }
        const int n = capabilityNumber(name);
        if (n < 0) return invalid(key + ": unknown capability " + name);
        out.push_back(n);
    }
    return {};
}

Result<Volume> parseVolume(const json& v, size_t index) {
    const auto at = "isolation.volumes[" + std::to_string(index) + "]";
    if (!v.is_object()) return invalid(at + " must be an object");
    Volume vol;
    for (const auto& [key, value] : v.items()) {
        if (key == "source") {
            auto p = getPath(value, at + ".source");
            if (!p) return p.error();
            vol.source = *p;
        } else if (key == "target") {
            auto p = getPath(value, at + ".target");
            if (!p) return p.error();
            vol.target = *p;
        } else if (key == "read_only") {
            auto b = getBool(value, at + ".read_only");
            if (!b) return b.error();
            vol.readOnly = *b;
        } else if (key == "propagation") {
            if (value == "private") vol.propagation = Propagation::Private;
            else if (value == "host-to-task") vol.propagation = Propagation::HostToTask;
            else if (value == "bidirectional") vol.propagation = Propagation::Bidirectional;
            else return invalid(at + ".propagation must be \"private\", \"host-to-task\" or \"bidirectional\"");
        } else {
            return invalid("unknown field " + at + "." + key);
        }
    }
    if (vol.source.empty() || vol.target.empty()) return invalid(at + " needs a source and a target");
    // A target of "/" would hide the whole root; outside the root there is
    // nothing (targets are absolute in the root and have no "..").
    if (vol.target == "/") return invalid(at + ".target must not be the task's root itself");
    if (vol.readOnly && vol.propagation == Propagation::Bidirectional)
        return invalid(at + ": a bidirectional volume cannot be read-only");
    return vol;
}

const char* propagationWord(Propagation p) {
    switch (p) {
        case Propagation::HostToTask: return SHIM_PROP_HOST_TO_TASK;
        case Propagation::Bidirectional: return SHIM_PROP_BIDIRECTIONAL;
        case Propagation::Private: break;
    }
    return SHIM_PROP_PRIVATE;
}

}  // namespace

uint64_t defaultCapabilities() {
    uint64_t m = 0;
    for (const auto* n : kNomadDefault) m |= uint64_t{1} << capabilityNumber(n);
    return m;
}

IsolationConfig::IsolationConfig() : allowedCaps(defaultCapabilities()) {}

int capabilityNumber(const std::string& name) {
    std::string up;
    for (char c : name) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (up.rfind("CAP_", 0) == 0) up.erase(0, 4);
    for (size_t i = 0; i < kCapNames.size(); ++i)
        if (up == kCapNames[i]) return static_cast<int>(i);
    return -1;
}

std::string capabilityName(int number) {
    if (number < 0 || number >= static_cast<int>(kCapNames.size())) return "CAP_" + std::to_string(number);
    return kCapNames[static_cast<size_t>(number)];
}

bool isCleanAbsolutePath(const std::string& p) {
    if (p.empty() || p.front() != '/' || p.find('\0') != std::string::npos) return false;
    size_t start = 1;
    while (start <= p.size()) {
        auto end = p.find('/', start);
        if (end == std::string::npos) end = p.size();
        const auto part = p.substr(start, end - start);
        if (part == ".." || part == "." || (part.empty() && end != p.size())) return false;
        start = end + 1;
    }
    return p.size() == 1 || p.back() != '/';
}

namespace {

// What a task on the host's root (filesystem false) can be given: its
// bounding set cut and no_new_privs (the shim applies both with no root of
// its own). Every other field needs the task's own root and namespaces, and
// is refused there by name rather than accepted and ignored (issue 32).
constexpr std::array<const char*, 3> kWithoutRoot = {"filesystem", "cap_drop", "no_new_privs"};

Result<void> checkHostRootFields(const json& j) {
    for (const auto& [key, value] : j.items())
        if (std::find(kWithoutRoot.begin(), kWithoutRoot.end(), key) == kWithoutRoot.end())
            return invalid("isolation." + key + " needs \"filesystem\": true (a task on the host's root takes only "
                           "cap_drop and no_new_privs)");
    return {};
}

}  // namespace

Result<Isolation> parseIsolation(const json& j) {
    if (!j.is_object()) return invalid("isolation must be an object");
    Isolation iso;
    iso.filesystem = true;  // an isolation object means isolated unless it says otherwise
    for (const auto& [key, value] : j.items()) {
        const auto at = "isolation." + key;
        if (key == "filesystem") {
            auto b = getBool(value, at);
            if (!b) return b.error();
            iso.filesystem = *b;
        } else if (key == "task_dir" || key == "alloc_dir" || key == "secrets_dir") {
            auto p = getPath(value, at);
            if (!p) return p.error();
            if (*p == "/") return invalid(at + " must not be /");
            (key == "task_dir" ? iso.taskDir : key == "alloc_dir" ? iso.allocDir : iso.secretsDir) = *p;
        } else if (key == "chroot_env") {
            if (!value.is_array()) return invalid(at + " must be an array of absolute paths");
            std::vector<std::string> paths;
            for (const auto& p : value) {
                auto path = getPath(p, at);
                if (!path) return path.error();
                if (*path == "/") return invalid(at + " must not hold / (the whole host)");
                paths.push_back(*path);
            }
            if (paths.size() > 32) return invalid(at + " has more than 32 paths");
            iso.chrootEnv = std::move(paths);
        } else if (key == "volumes") {
            if (!value.is_array()) return invalid(at + " must be an array of objects");
            if (value.size() > 16) return invalid(at + " has more than 16 volumes");
            for (size_t i = 0; i < value.size(); ++i) {
                auto v = parseVolume(value[i], i);
                if (!v) return v.error();
                iso.volumes.push_back(std::move(*v));
            }
        } else if (key == "pid_mode" || key == "ipc_mode") {
            auto host = getNsMode(value, at);
            if (!host) return host.error();
            (key == "pid_mode" ? iso.pidHost : iso.ipcHost) = *host;
        } else if (key == "cap_add") {
            if (auto r = getCaps(value, at, iso.capAdd, nullptr); !r) return r.error();
        } else if (key == "cap_drop") {
            if (auto r = getCaps(value, at, iso.capDrop, &iso.capDropAll); !r) return r.error();
        } else if (key == "secrets_size_kb") {
            if (!value.is_number_integer() || value.get<int64_t>() < 4 ||
                value.get<int64_t>() > static_cast<int64_t>(kMaxSecretsBytes / 1024))
                return invalid(at + " must be an integer 4.." + std::to_string(kMaxSecretsBytes / 1024));
            iso.secretsSizeBytes = static_cast<uint64_t>(value.get<int64_t>()) * 1024;
        } else if (key == "no_new_privs") {
            auto b = getBool(value, at);
            if (!b) return b.error();
            iso.noNewPrivs = *b;
        } else {
            return invalid("unknown field " + at);
        }
    }
    if (!iso.filesystem)
        if (auto r = checkHostRootFields(j); !r) return r.error();
    return iso;
}

Result<void> resolveIsolation(Isolation& iso, const IsolationConfig& node, const std::string& defaultTaskDir) {
    if (!iso.filesystem) {
        // Only the bounding set: every capability but the dropped ones.
        uint64_t bound = iso.capDropAll ? 0 : ~uint64_t{0};
        for (int c : iso.capDrop) bound &= ~(uint64_t{1} << c);
        iso.caps = bound;
        return {};
    }
    for (int c : iso.capAdd)
        if (!(node.allowedCaps & (uint64_t{1} << c)))
            return invalid("isolation.cap_add: capability " + capabilityName(c) +
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

std::vector<std::string> shimIsolationArgs(const Isolation& iso) {
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

}  // namespace taskscope::manager
