// Whether a volume's source sits on a shared mount, read from the mount
// table (shared_source.hpp).
#include "manager/launch/shared_source.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>

#include "common/error_names.hpp"
#include "common/safe_path.hpp"
#include "scope/mount_table.hpp"

namespace taskscope::manager {

std::optional<HoldingMount> holdingMount(std::string_view mountinfo, const std::string& path) {
    auto mounts = scope::parseMountInfo(mountinfo, "mountinfo", true);
    if (!mounts) return std::nullopt;
    const auto* m = scope::holdingMount(*mounts, path);
    if (!m) return std::nullopt;
    return HoldingMount{m->mountPoint, m->shared()};
}

common::Result<void> ensureSharedSource(const std::string& source) {
    // The source as named, no symlink followed (issue 32): a volume source
    // in a directory a task can write, swapped for a link to /etc, must not
    // have the manager bind and share the host's /etc. The spec's paths
    // have no "." or ".." (isCleanAbsolutePath), so the name is the path.
    auto fd = common::openNoSymlinks(source, O_PATH | O_DIRECTORY);
    if (!fd) return common::makeError(common::errors::kInvalidSpec, "bidirectional volume source: " + fd.error().message);
    // Unreadable, it counts as not shared: the source is bound and shared
    // here, which is right whatever the table said.
    const auto table = scope::readOwnMountInfo();
    const auto holder = table ? holdingMount(*table, source) : std::nullopt;
    if (holder && holder->shared) return {};
    if (::mount(common::fdPath(fd->get()).c_str(), common::fdPath(fd->get()).c_str(), nullptr, MS_BIND | MS_REC,
                nullptr) < 0)
        return common::errnoError("bind " + source + " onto itself", errno);
    // The fd still names the mount below the new bind: the bind is the
    // source opened again, checked to be the same directory.
    auto bound = common::openNoSymlinks(source, O_PATH | O_DIRECTORY);
    struct stat a {}, b {};
    if (!bound || ::fstat(fd->get(), &a) < 0 || ::fstat(bound->get(), &b) < 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino)
        return common::makeError(common::errors::kInternal,
                                 "bidirectional volume source " + source + " changed while it was bound");
    if (::mount(nullptr, common::fdPath(bound->get()).c_str(), nullptr, MS_SHARED, nullptr) < 0)
        return common::errnoError("make " + source + " shared", errno);
    return {};
}

}  // namespace taskscope::manager
