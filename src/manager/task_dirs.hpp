#pragma once
// The directories of isolated tasks that taskscope makes itself (when the
// scheduler hands in none): <state>/tasks-root/<alloc>/tasks/<task> is the
// task's root, <state>/tasks-root/<alloc>/alloc the allocation's shared
// alloc/ dir. Forgetting a task removes its dir, and the allocation's with
// its last task; a dir the scheduler handed in is never removed.

#include <string>

#include "common/result.hpp"
#include "manager/isolation.hpp"

namespace taskscope::manager {

std::string allocRootDir(const std::string& stateDir, const std::string& allocId);
std::string taskRootDir(const std::string& stateDir, const std::string& allocId, const std::string& task);

/// Resolves `iso` against the node (resolveIsolation) and makes the dirs
/// taskscope owns; a handed-in task or alloc dir must exist (InvalidSpec).
common::Result<void> prepareTaskDirs(Isolation& iso, const IsolationConfig& node, const std::string& stateDir,
                                     const std::string& allocId, const std::string& task);

/// Removes what prepareTaskDirs made for the task; the allocation's dir too
/// when `lastOfAlloc`. Never crosses a mount point (a mount still there
/// makes the removal fail rather than reach into the host).
common::Result<void> removeTaskDirs(const Isolation& iso, const std::string& stateDir, const std::string& allocId,
                                    const std::string& task, bool lastOfAlloc);

/// rm -r without crossing mount points or following symlinks.
common::Result<void> removeTree(const std::string& path);

}  // namespace taskscope::manager
