#include "common/safe_path.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace taskscope::common {

namespace {

Result<UniqueFd> refused(const std::string& path, int err) {
    return errnoError("open " + path, err);
}

// One component at a time, each opened O_PATH|O_NOFOLLOW and looked at:
// what openat2's RESOLVE_NO_SYMLINKS does in one call.
Result<UniqueFd> walk(int dirFd, const std::string& path, int flags, uint64_t resolve) {
    UniqueFd dir;
    int at = dirFd;
    size_t pos = 0;
    if (!path.empty() && path.front() == '/') {
        if (resolve & RESOLVE_BENEATH) return refused(path, EXDEV);
        dir.reset(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!dir) return refused(path, errno);
        at = dir.get();
    }
    for (;;) {
        while (pos < path.size() && path[pos] == '/') ++pos;
        auto end = path.find('/', pos);
        if (end == std::string::npos) end = path.size();
        const auto name = pos < path.size() ? path.substr(pos, end - pos) : std::string(".");
        if (name == ".." && (resolve & RESOLVE_BENEATH)) return refused(path, EXDEV);
        const bool last = path.find_first_not_of('/', end) == std::string::npos;
        if (last) {
            UniqueFd fd(::openat(at, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
            if (!fd) return refused(path, errno);
            struct stat st {};
            if ((flags & O_PATH) && ::fstat(fd.get(), &st) == 0 && S_ISLNK(st.st_mode)) return refused(path, ELOOP);
            return fd;
        }
        UniqueFd next(::openat(at, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (!next) return refused(path, errno);
        struct stat st {};
        if (::fstat(next.get(), &st) < 0) return refused(path, errno);
        if (S_ISLNK(st.st_mode)) return refused(path, ELOOP);
        if (!S_ISDIR(st.st_mode)) return refused(path, ENOTDIR);
        dir = std::move(next);
        at = dir.get();
        pos = end;
    }
}

}  // namespace

Result<UniqueFd> openNoSymlinks(int dirFd, const std::string& path, int flags, uint64_t resolve) {
    open_how how{};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
    how.resolve = resolve | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, dirFd, path.c_str(), &how, sizeof how)));
    if (!fd) {
        if (errno == ENOSYS) return walk(dirFd, path, flags, resolve);
        return refused(path, errno);
    }
    // With O_PATH|O_NOFOLLOW openat2 hands back a symlink at the end itself.
    struct stat st {};
    if ((flags & O_PATH) && ::fstat(fd.get(), &st) == 0 && S_ISLNK(st.st_mode)) return refused(path, ELOOP);
    return fd;
}

std::string fdPath(int fd) {
    return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace taskscope::common
