// The dirs of isolated tasks made, and removed with the task or its
// allocation's last task (task_dirs.hpp).
#include "manager/launch/task_dirs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <set>
#include <string_view>

#include "common/error_names.hpp"
#include "common/files.hpp"
#include "common/safe_path.hpp"
#include "manager/launch/shared_source.hpp"
#include "scope/unit_name.hpp"

namespace taskscope::manager {

namespace {

bool isDir(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A task can plant anything in its dirs: a tree deeper than this is left
// (and named in the error) rather than holding a descriptor per level.
constexpr int kMaxRemoveDepth = 256;

std::vector<std::string> namesIn(int dirFd) {
    std::vector<std::string> out;
    std::unique_ptr<DIR, int (*)(DIR*)> d(::fdopendir(::dup(dirFd)), &::closedir);
    if (!d) return out;
    while (auto* e = ::readdir(d.get()))
        if (std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..") out.push_back(e->d_name);
    return out;
}

// Removes `name` in `parentFd` and all below it. Every directory is opened
// relative to its parent, never by a path again, with no symlink followed
// and no mount crossed (RESOLVE_NO_XDEV: a mount still there fails the
// removal rather than reach into what it shows); a symlink is removed as
// itself. A task that swaps a directory for a symlink while this runs
// makes the removal of that name fail, and reaches nothing.
common::Result<void> removeAt(int parentFd, const std::string& name, const std::string& shown, int depth) {
    struct stat st {};
    if (::fstatat(parentFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? common::Result<void>{} : common::errnoError("remove " + shown, errno);
    if (S_ISDIR(st.st_mode)) {
        if (depth >= kMaxRemoveDepth) return common::errnoError("remove " + shown + " (too deep)", ELOOP);
        auto dir = common::openNoSymlinks(parentFd, name, O_RDONLY | O_DIRECTORY, RESOLVE_NO_XDEV | RESOLVE_BENEATH);
        if (!dir) return dir.error().context("remove " + shown);
        for (const auto& child : namesIn(dir->get()))
            if (auto r = removeAt(dir->get(), child, shown + "/" + child, depth + 1); !r) return r;
    }
    if (::unlinkat(parentFd, name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
        return common::errnoError("remove " + shown, errno);
    return {};
}

}  // namespace

std::string allocRootDir(const std::string& stateDir, const std::string& allocId) {
    return stateDir + "/tasks-root/" + scope::escapeComponent(allocId);
}

std::string taskRootDir(const std::string& stateDir, const std::string& allocId, const std::string& task) {
    return allocRootDir(stateDir, allocId) + "/tasks/" + scope::escapeComponent(task);
}

common::Result<void> prepareTaskDirs(spec::Isolation& iso, const IsolationConfig& node, const std::string& stateDir,
                                     const std::string& allocId, const std::string& task) {
    if (!iso.filesystem) return resolveIsolation(iso, node, "");  // its bounding set: no dirs
    // Handed-in dirs are named without symlinks (issue 32): the shim opens
    // them that way, and a link here is refused now rather than at exec.
    for (const auto& [field, dir] : {std::pair{"task_dir", &iso.taskDir}, std::pair{"alloc_dir", &iso.allocDir},
                                     std::pair{"secrets_dir", &iso.secretsDir}}) {
        if (dir->empty()) continue;
        if (auto fd = common::openNoSymlinks(*dir, O_PATH | O_DIRECTORY); !fd)
            return common::makeError(common::errors::kInvalidSpec, std::string("isolation.") + field + " " + *dir +
                                                        " is not a directory reached without a symlink (" +
                                                        fd.error().message + ")");
    }
    if (auto r = resolveIsolation(iso, node, taskRootDir(stateDir, allocId, task)); !r) return r;
    for (const auto& v : iso.volumes)
        if (v.propagation == spec::Propagation::Bidirectional)
            if (auto r = ensureSharedSource(v.source); !r) return r;
    if (iso.allocDir.empty()) {
        // Shared by the allocation's tasks, whatever users they run as.
        iso.allocDir = allocRootDir(stateDir, allocId) + "/alloc";
        if (auto r = common::makeDirs(iso.allocDir, 0755); !r) return r.error().context("create alloc dir");
        if (::chmod(iso.allocDir.c_str(), 01777) < 0) return common::errnoError("chmod " + iso.allocDir, errno);
    }
    if (iso.taskDirMade)
        if (auto r = common::makeDirs(iso.taskDir, 0755); !r) return r.error().context("create task dir");
    return {};
}

size_t sweepUnownedTaskDirs(const std::string& stateDir,
                            const std::vector<std::pair<std::string, std::string>>& owned) {
    std::set<std::string> allocs, tasks;
    for (const auto& [alloc, task] : owned) {
        allocs.insert(allocRootDir(stateDir, alloc));
        tasks.insert(taskRootDir(stateDir, alloc, task));
    }
    const auto entries = [](const std::string& dir) {
        std::vector<std::string> out;
        std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), &::closedir);
        if (!d) return out;
        while (auto* e = ::readdir(d.get()))
            if (std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..")
                out.push_back(dir + "/" + e->d_name);
        return out;
    };
    size_t removed = 0;
    const auto remove = [&removed](const std::string& path) {
        if (auto r = removeTree(path); r) ++removed;
    };
    for (const auto& alloc : entries(stateDir + "/tasks-root")) {
        if (!allocs.count(alloc)) {
            remove(alloc);
            continue;
        }
        for (const auto& task : entries(alloc + "/tasks"))
            if (!tasks.count(task)) remove(task);
    }
    return removed;
}

common::Result<void> removeTree(const std::string& path) {
    // The path itself is ours (under the state dir, root's alone): its
    // parent is opened without following a symlink all the same.
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos || slash + 1 == path.size())
        return common::errnoError("remove " + path, EINVAL);
    struct stat st {};
    if (::lstat(path.c_str(), &st) < 0 && errno == ENOENT) return {};  // nothing to remove
    auto parent = common::openNoSymlinks(slash == 0 ? "/" : path.substr(0, slash), O_PATH | O_DIRECTORY);
    if (!parent) return parent.error().context("remove " + path);
    return removeAt(parent->get(), path.substr(slash + 1), path, 0);
}

common::Result<void> removeTaskDirs(const spec::Isolation& iso, const std::string& stateDir, const std::string& allocId,
                                    const std::string& task, bool lastOfAlloc) {
    if (iso.filesystem && iso.taskDir.empty())
        if (auto r = removeTree(taskRootDir(stateDir, allocId, task)); !r) return r;
    if (!lastOfAlloc) return {};
    // The allocation's dir goes with its last task, whatever that task's own
    // isolation or alloc_dir: another task of the allocation may have made
    // it (a plugin task beside plain ones). Under our state dir there is
    // only what we made; an alloc_dir handed in lives elsewhere, left alone.
    const auto root = allocRootDir(stateDir, allocId);
    if (!isDir(root)) return {};
    if (auto r = removeTree(root + "/alloc"); !r) return r;
    // What is left of the allocation's dir: tasks/ once empty, then itself
    // (another task's dir handed in elsewhere leaves nothing here).
    ::rmdir((root + "/tasks").c_str());
    ::rmdir(root.c_str());
    return {};
}

OwnedTaskDirs OwnedTaskDirs::of(const spec::TaskSpec& spec, const IsolationConfig& node, std::string stateDir,
                                std::string allocId, std::string task) {
    return {effectiveIsolation(spec.isolation, spec.isolationGiven, node), std::move(stateDir), std::move(allocId),
            std::move(task)};
}

common::Result<void> OwnedTaskDirs::remove(bool lastOfAlloc) const {
    return removeTaskDirs(isolation, stateDir, allocId, task, lastOfAlloc);
}

}  // namespace taskscope::manager
