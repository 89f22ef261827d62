#pragma once
// A task's isolation (spec/isolation.hpp, what the task asks for) resolved
// against the node's configuration (chroot_env, the capability allow-list)
// and turned into the shim's isolation options.

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "spec/isolation.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::manager {

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

/// The isolation a spec runs with on this node: the node's default applies
/// to a spec without an isolation object.
spec::Isolation effectiveIsolation(const spec::Isolation& asked, bool given, const IsolationConfig& node);

/// Checks the capabilities against the node's allow-list (InvalidSpec
/// naming the capability), computes the set and fills in the node's
/// chroot_env; `defaultTaskDir` is used when the spec gives none.
common::Result<void> resolveIsolation(spec::Isolation& iso, const IsolationConfig& node,
                                      const std::string& defaultTaskDir);

/// The shim's isolation options (shim_protocol.h) for a resolved isolation.
std::vector<std::string> shimIsolationArgs(const spec::Isolation& iso);

/// --device HOST TASK for each of an isolated task's devices (a task on
/// the host's root sees them where they are: none).
std::vector<std::string> shimDeviceArgs(const spec::TaskSpec& spec);

/// An isolated task's resolv.conf and hosts (--dns-*, --hosts): what the
/// spec's dns leaves empty comes from the host's resolv.conf (its text,
/// `hostResolvConf`), as Nomad fills it; none for a task without them.
std::vector<std::string> shimNetFileArgs(const spec::TaskSpec& spec, const std::string& hostResolvConf);

/// --oom-score-adj, always (a task never inherits the daemon's own score),
/// and --rlimit for each of the spec's ulimits.
std::vector<std::string> shimLimitArgs(const spec::TaskSpec& spec);

}  // namespace taskscope::manager
