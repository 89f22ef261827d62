#pragma once
// The isolation object of a task spec (issue 14): what a task asks for.
// Resolving it against the node (chroot_env, the capability allow-list)
// and turning it into the shim's options is the manager's
// (manager/launch/isolation.hpp).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace taskscope::spec {

enum class Propagation { Private, HostToTask, Bidirectional };

struct Volume {
    std::string source;  ///< host path
    std::string target;  ///< path inside the task's root
    bool readOnly = false;
    Propagation propagation = Propagation::Private;

    bool operator==(const Volume&) const = default;
};

/// A secrets tmpfs of 1 MiB unless the spec says otherwise.
inline constexpr uint64_t kDefaultSecretsBytes = 1024 * 1024;

struct Isolation {
    bool filesystem = false;                            ///< false: the task runs like raw_exec (only cap_drop and no_new_privs apply)
    std::string taskDir;                                ///< given by the scheduler; empty: taskscope makes one
    std::string allocDir;                               ///< bound at /alloc; empty: an alloc/ dir of the task's own
    std::optional<std::vector<std::string>> chrootEnv;  ///< unset: the node's
    std::vector<Volume> volumes;
    bool pidHost = false;
    bool ipcHost = false;
    std::vector<int> capAdd;  ///< capability numbers
    std::vector<int> capDrop;
    bool capDropAll = false;
    uint64_t secretsSizeBytes = kDefaultSecretsBytes;
    std::string secretsDir;  ///< bound at secrets/ instead of a tmpfs; empty: the tmpfs
    bool noNewPrivs = false;

    // Filled when the start resolves it (manager::resolveIsolation); never
    // part of the spec's JSON.
    uint64_t caps = 0;  ///< isolated: the task's set; on the host's root: its bounding set
    bool taskDirMade = false;  ///< taskscope made taskDir (and removes it on forget)

    bool operator==(const Isolation&) const = default;
};

/// Nomad's exec driver's default capability set, by name: what a task
/// without cap_add runs with, and the default of the driver's allow_caps
/// (drivers/shared/capabilities/defaults.go HCLSpecLiteral, Nomad
/// aa026cc99cfb). Spelled here alone, for the manager and the driver.
inline constexpr std::array<const char*, 13> kNomadDefaultCapabilities = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
    "SETFCAP",     "SETGID", "SETPCAP",     "SETUID", "SYS_CHROOT"};
/// The set's bits (1 << capability number).
uint64_t nomadDefaultCapabilityBits();

/// "NET_ADMIN", "cap_net_admin" -> 12; -1 when unknown.
int capabilityNumber(const std::string& name);
/// 12 -> "NET_ADMIN"; unknown numbers as "CAP_<n>".
std::string capabilityName(int number);

/// A path the spec may name: absolute, no "..", no empty or "." component.
bool isCleanAbsolutePath(const std::string& p);

}  // namespace taskscope::spec
