#pragma once
// The task spec a caller hands to StartTask, parsed strictly: an unknown
// field or a value out of range is an error, never silently ignored.

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "plugins/plugin_spec.hpp"
#include "manager/isolation.hpp"
#include "scope/resources.hpp"

namespace taskscope::manager {

struct TaskSpec {
    std::string command;
    std::vector<std::string> args;
    std::map<std::string, std::string> env;  ///< values are secret: redacted for all but root
    bool secretArgs = false;  ///< args hold secrets too: redacted like env values
    std::string cwd = "/";
    std::string user = "root";
    std::string group;  ///< empty: the user's primary group
    int killSignal = 15;
    int64_t killTimeoutMs = 5000;
    bool logs = true;  ///< collect stdout/stderr into the task's log files
    int logMaxFiles = 0;       ///< 0: the manager's default
    int logMaxFileSizeMb = 0;  ///< 0: the manager's default
    /// Files (typically fifos a scheduler's log collector reads) the
    /// task's stdout/stderr go to instead of the streamer's log files;
    /// setting either turns log collection off (`logs` false).
    std::string stdoutPath;
    std::string stderrPath;
    scope::Resources resources;
    std::optional<plugins::PluginSpec> plugin;  ///< the task serves a plugin (CSI)
    Isolation isolation;          ///< filesystem false: not isolated
    bool isolationGiven = false;  ///< the spec has an isolation object (else the node's default applies)
    /// "network_namespace": "alloc" joins the allocation's network
    /// (CreateNetwork) before the task's first instruction; "host" (the
    /// default) stays in the host's.
    bool joinAllocNetwork = false;

    // Filled by resolveTaskSpec from the system's user and file databases.
    std::string path;  ///< the executable that will run
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
};

/// Parses and range-checks a spec (InvalidSpec, InvalidSignal); pure.
common::Result<TaskSpec> parseTaskSpec(const std::string& json);

/// Parses a resources object alone (UpdateTask): InvalidSpec on error.
common::Result<scope::Resources> parseResources(const std::string& json);

/// Looks up the user and group (UnknownUser), the executable in the
/// spec's PATH (NoSuchBinary) and the working directory (InvalidSpec).
/// Adds a default PATH to the environment when the spec has none.
common::Result<void> resolveTaskSpec(TaskSpec& spec);

/// For an isolated task whose isolation is resolved (prepareTaskDirs): its
/// user and group looked up in its root's /etc (issue 14), which is the
/// host's only when chroot_env binds /etc. UnknownUser names the file.
common::Result<void> resolveRootIdentity(TaskSpec& spec);

}  // namespace taskscope::manager
