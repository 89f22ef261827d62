#pragma once
// What of Nomad's task environment reaches the task: raw_exec's
// denied_envvars (plugin and task lists, globs as github.com/ryanuber/
// go-glob matches them: `*` is any run of characters, nothing else is
// special), and the path variables a task on the host's root needs as
// host paths. Pure.

#include <map>
#include <string>
#include <vector>

namespace taskscope::nomad {

/// go-glob's Glob(pattern, subject), which raw_exec's buildEnvList uses.
bool globMatch(const std::string& pattern, const std::string& subject);

/// Removes every variable whose name matches one of `denied`.
void removeDenied(std::map<std::string, std::string>& env, const std::vector<std::string>& denied);

/// The host paths of a task's dirs (Nomad's client/allocdir layout).
struct HostDirs {
    std::string alloc;    ///< <alloc_dir>/alloc
    std::string local;    ///< <alloc_dir>/<task>/local
    std::string secrets;  ///< <alloc_dir>/<task>/secrets
};

/// For a task on the host's root: the driver reports filesystem isolation,
/// so Nomad wrote the in-root paths (NOMAD_ALLOC_DIR=/alloc,
/// NOMAD_TASK_DIR=/local, NOMAD_SECRETS_DIR=/secrets, and the task API
/// socket NOMAD_UNIX_ADDR=unix:///secrets/api.sock: client/taskenv/env.go);
/// each is set to its host path. NOMAD_UNIX_ADDR is rewritten when it
/// names a path under the in-root secrets dir, and left alone otherwise.
void rewriteForHostRoot(std::map<std::string, std::string>& env, const HostDirs& dirs);

}  // namespace taskscope::nomad
