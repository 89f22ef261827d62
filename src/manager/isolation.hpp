#pragma once
// The isolation object of a task spec (issue 14): what a task asks for,
// checked strictly when the spec is parsed (pure), then resolved against
// the node's configuration (chroot_env, capability allow-list) and turned
// into the shim's isolation options.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.hpp"

namespace taskscope::manager {

enum class Propagation { Private, HostToTask, Bidirectional };

struct Volume {
    std::string source;  ///< host path
    std::string target;  ///< path inside the task's root
    bool readOnly = false;
    Propagation propagation = Propagation::Private;
};

struct Isolation {
    bool filesystem = false;  ///< false: the task runs like raw_exec (only cap_drop and no_new_privs apply)
    std::string taskDir;      ///< given by the scheduler; empty: taskscope makes one
    std::string allocDir;     ///< bound at /alloc; empty: an alloc/ dir of the task's own
    std::optional<std::vector<std::string>> chrootEnv;  ///< unset: the node's
    std::vector<Volume> volumes;
    bool pidHost = false;
    bool ipcHost = false;
    std::vector<int> capAdd;   ///< capability numbers
    std::vector<int> capDrop;
    bool capDropAll = false;
    uint64_t secretsSizeBytes = 1024 * 1024;
    std::string secretsDir;  ///< bound at secrets/ instead of a tmpfs; empty: the tmpfs
    bool noNewPrivs = false;

    // Filled by resolveIsolation.
    uint64_t caps = 0;  ///< isolated: the task's set; on the host's root: its bounding set
    bool taskDirMade = false;  ///< taskscope made taskDir (and removes it on forget)
};

/// The node's side (manager config).
struct IsolationConfig {
    bool defaultIsolated = false;  ///< a spec without an isolation object is isolated
    std::vector<std::string> chrootEnv = {"/bin", "/etc", "/lib", "/lib32", "/lib64", "/run/resolvconf",
                                          "/sbin", "/usr", "/run/systemd/resolve"};
    uint64_t allowedCaps;  ///< the node's allow-list; defaults to Nomad's exec default set
    IsolationConfig();
};

/// Nomad's exec driver default set: AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER
/// FSETID KILL MKNOD NET_BIND_SERVICE SETFCAP SETGID SETPCAP SETUID SYS_CHROOT.
uint64_t defaultCapabilities();

/// "NET_ADMIN", "cap_net_admin" -> 12; -1 when unknown.
int capabilityNumber(const std::string& name);
std::string capabilityName(int number);

/// Parses the spec's "isolation" object (InvalidSpec naming the field).
common::Result<Isolation> parseIsolation(const nlohmann::json& j);

/// Checks the capabilities against the node's allow-list (InvalidSpec
/// naming the capability), computes the set and fills in the node's
/// chroot_env; `defaultTaskDir` is used when the spec gives none.
common::Result<void> resolveIsolation(Isolation& iso, const IsolationConfig& node, const std::string& defaultTaskDir);

/// The shim's isolation options (shim_protocol.h) for a resolved isolation.
std::vector<std::string> shimIsolationArgs(const Isolation& iso);

/// A path the spec may name: absolute, no "..", no empty or "." component.
bool isCleanAbsolutePath(const std::string& p);

}  // namespace taskscope::manager
