#pragma once
// The directories of isolated tasks that taskscope makes itself (when the
// scheduler hands in none): <state>/tasks-root/<alloc>/tasks/<task> is the
// task's root, <state>/tasks-root/<alloc>/alloc the allocation's shared
// alloc/ dir. Forgetting a task removes its dir, and the allocation's with
// its last task; a dir the scheduler handed in is never removed.

#include <string>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "manager/launch/isolation.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::manager {

std::string allocRootDir(const std::string& stateDir, const std::string& allocId);
std::string taskRootDir(const std::string& stateDir, const std::string& allocId, const std::string& task);

/// Resolves `iso` against the node (resolveIsolation) and makes the dirs
/// taskscope owns; a handed-in task, alloc or secrets dir must be a
/// directory reached without a symlink (InvalidSpec naming the field). A
/// task on the host's root gets its bounding set resolved, and no dirs.
common::Result<void> prepareTaskDirs(spec::Isolation& iso, const IsolationConfig& node, const std::string& stateDir,
                                     const std::string& allocId, const std::string& task);

/// The dirs a task has that are taskscope's, as one value: which they are
/// (its spec's isolation, the node's default where the spec has no
/// isolation object) is worked out here alone, by of(). A failed start's
/// undo, a forget and a recovery that finds a task that never ran remove
/// them the same way, on the start worker, in order with the starts that
/// make dirs (a later start of the allocation makes its dir again after).
struct OwnedTaskDirs {
    spec::Isolation isolation;
    std::string stateDir;
    std::string allocId;
    std::string task;

    static OwnedTaskDirs of(const spec::TaskSpec& spec, const IsolationConfig& node, std::string stateDir,
                            std::string allocId, std::string task);
    /// removeTaskDirs of them; blocking (the start worker's).
    common::Result<void> remove(bool lastOfAlloc) const;
};

/// Removes what prepareTaskDirs made for the task; the allocation's dir too
/// when `lastOfAlloc`. Never crosses a mount point (a mount still there
/// makes the removal fail rather than reach into the host).
common::Result<void> removeTaskDirs(const spec::Isolation& iso, const std::string& stateDir, const std::string& allocId,
                                    const std::string& task, bool lastOfAlloc);

/// Removes the dirs under <state>/tasks-root that no task owns: what a start
/// cut off before its record was written (the manager killed mid-start)
/// left behind. `owned` holds every known task's allocation and task names
/// (their dirs are kept, and their allocation's). Returns how many went.
size_t sweepUnownedTaskDirs(const std::string& stateDir,
                            const std::vector<std::pair<std::string, std::string>>& owned);

/// rm -r without crossing mount points or following symlinks: relative to
/// directory fds, each opened RESOLVE_NO_SYMLINKS|NO_XDEV|BENEATH.
common::Result<void> removeTree(const std::string& path);

}  // namespace taskscope::manager
