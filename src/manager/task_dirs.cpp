#include "manager/task_dirs.hpp"

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <set>
#include <string_view>

#include "common/error_names.hpp"
#include "common/files.hpp"
#include "manager/shared_source.hpp"
#include "scope/unit_name.hpp"

namespace taskscope::manager {

namespace {

bool isDir(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int removeEntry(const char* path, const struct stat*, int type, struct FTW*) {
    const int r = type == FTW_DP ? ::rmdir(path) : ::unlink(path);
    return r < 0 && errno != ENOENT ? errno : 0;
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
    if (!iso.filesystem) return {};
    if (!iso.taskDir.empty() && !isDir(iso.taskDir))
        return common::makeError(common::errors::kInvalidSpec, "isolation.task_dir " + iso.taskDir + " is not a directory");
    if (!iso.allocDir.empty() && !isDir(iso.allocDir))
        return common::makeError(common::errors::kInvalidSpec, "isolation.alloc_dir " + iso.allocDir + " is not a directory");
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
    const int r = ::nftw(path.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    if (r < 0 && errno != ENOENT) return common::errnoError("remove " + path, errno);
    if (r > 0) return common::errnoError("remove " + path, r);
    return {};
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

}  // namespace taskscope::manager
