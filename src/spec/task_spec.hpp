#pragma once
// The task spec: what a caller asks StartTask for, as one typed struct
// shared by every part of taskscope that makes, reads or shows a spec (the
// manager, the Nomad driver, taskscopectl, the streamer). JSON is only its
// encoding at the edges, through the one converter below, whose tables
// (task_spec_json.cpp) are also its validation: an unknown field or a value
// out of range is InvalidSpec naming the field, never silently ignored.

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "spec/id_ranges.hpp"
#include "spec/isolation.hpp"
#include "spec/json.hpp"
#include "spec/net_files.hpp"
#include "spec/plugin_spec.hpp"
#include "spec/resources.hpp"
#include "spec/task_limits.hpp"

namespace taskscope::spec {

/// The namespace a task's network lives in ("network_namespace").
enum class NetworkNamespace {
    Host,   ///< the host's (the default)
    Alloc,  ///< its allocation's (CreateNetwork), joined before its first instruction
};

/// Who a task without a user runs as: `nobody` in its own root (as Nomad's
/// exec runs it: an isolated task is a tenant, not the node's admin),
/// root on the host's root (as raw_exec runs it, the agent's own user). A
/// task that needs root says "user": "root".
inline constexpr const char* kDefaultUser = "root";
inline constexpr const char* kDefaultIsolatedUser = "nobody";
/// nobody's IDs where a task's own root has no user database (a chroot_env
/// without /etc): the kernel's overflow IDs, which every distribution gives
/// nobody/nogroup.
inline constexpr unsigned kNobodyId = 65534;

inline constexpr int kDefaultKillSignal = 15;  // SIGTERM
inline constexpr int64_t kDefaultKillTimeoutMs = 5000;

struct TaskSpec {
    std::string command;
    std::vector<std::string> args;
    std::map<std::string, std::string> env;  ///< values are secret: redacted for all but root
    bool secretArgs = false;                 ///< args hold secrets too: redacted like env values
    /// The task manages cgroups of its own below its scope: its scope
    /// delegates every controller (systemd's Delegate=true). Off, it
    /// delegates none (issue 49: the kernel's cpu.max walk per start).
    bool delegate = false;
    std::string cwd = "/";
    /// A name in the task's user database, or a number (a UID that needs
    /// no entry: Nomad's dynamic workload users). Empty: kDefaultIsolatedUser
    /// in the task's own root, kDefaultUser on the host's.
    std::string user;
    std::string group;  ///< empty: the user's primary group (a number: that GID)
    /// Users and groups the task must not run as (Nomad's exec
    /// denied_host_uids / denied_host_gids): checked against the resolved
    /// UID and every group of the task, before anything is made.
    IdRanges deniedUids;
    IdRanges deniedGids;
    int killSignal = kDefaultKillSignal;
    int64_t killTimeoutMs = kDefaultKillTimeoutMs;
    bool logs = true;          ///< collect stdout/stderr into the task's log files
    int logMaxFiles = 0;       ///< 0: the manager's default
    int logMaxFileSizeMb = 0;  ///< 0: the manager's default
    /// Copy the collected output to the journal too, attributed to the
    /// task's scope (`journalctl -u <unit>`); unset: the node's default.
    /// Only output the streamer collects can be copied: true is refused
    /// with `logs` false or with stdout_path/stderr_path.
    std::optional<bool> logJournal;
    /// Files (typically fifos a scheduler's log collector reads) the
    /// task's stdout/stderr go to instead of the streamer's log files;
    /// setting either turns log collection off (`logs` false).
    std::string stdoutPath;
    std::string stderrPath;
    Resources resources;
    std::optional<PluginSpec> plugin;  ///< the task serves a plugin (CSI)
    Isolation isolation;               ///< filesystem false: not isolated
    bool isolationGiven = false;       ///< the spec has an isolation object (else the node's default applies)
    NetworkNamespace network = NetworkNamespace::Host;
    /// rlimits by docker's name ("nofile"), set in the task (and in every
    /// command exec'd into it) before its first instruction; the others
    /// are the manager's own.
    std::map<std::string, Ulimit> ulimits;
    /// Written for every task, 0 unless asked: a task never inherits the
    /// daemon's own score.
    int oomScoreAdj = 0;
    /// Bound into an isolated task's /dev and allowed in its scope; a task
    /// on the host's root sees the host's /dev (each must exist either way).
    std::vector<Device> devices;
    /// An isolated task's /etc/resolv.conf (the allocation network's DNS)
    /// and /etc/hosts (the allocation's address and name); unset: the
    /// files its root binds from the host.
    std::optional<DnsConfig> dns;
    std::optional<HostsEntry> hosts;

    // Filled by the manager's start from the system's user and file
    // databases (manager/launch/task_resolve.hpp); never part of the JSON.
    std::string path;  ///< the executable that will run
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;

    bool joinsAllocNetwork() const { return network == NetworkNamespace::Alloc; }
    /// The user the task runs as: `user`, else nobody in its own root and
    /// root on the host's (kDefaultIsolatedUser, kDefaultUser).
    std::string effectiveUser() const;
    bool operator==(const TaskSpec&) const = default;
};

/// Parses and range-checks a caller's spec (InvalidSpec, naming the field).
common::Result<TaskSpec> parseTaskSpec(std::string_view json);
/// The same from JSON already parsed. Lenient: a spec another daemon wrote
/// (GetTask's), whose unknown fields are skipped.
common::Result<TaskSpec> taskSpecFromJson(const Json& j, Strictness how = Strictness::Strict);

/// The spec as JSON: every field that differs from its default (command
/// and args always), so a spec read back is the spec written.
Json toJson(const TaskSpec& spec);
/// toJson as text.
std::string toText(const TaskSpec& spec);

/// The marker that replaces every secret value; keys and shape stay.
inline constexpr const char* kRedactedValue = "<redacted>";
/// The spec as any local user may see it: every env value, and every
/// argument when secretArgs is set, replaced by kRedactedValue. Scheduler
/// agents put secrets (Vault tokens, passwords) in a task's environment,
/// and the bus hands properties and signals to anyone.
TaskSpec redacted(const TaskSpec& spec);

/// The plugin object of a spec alone (InvalidSpec naming "plugin.<field>").
common::Result<PluginSpec> parsePluginSpec(const Json& j);

}  // namespace taskscope::spec
