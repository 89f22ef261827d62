#pragma once
// Opening paths a task or its user can influence (issue 32) from a daemon
// that runs as root: no symlink is followed anywhere in the path, so what
// is opened is what the path names, whatever a task put in a directory it
// can write; the type of what was found is then checked on the fd, never
// on the name. openat2(2) with RESOLVE_NO_SYMLINKS (Linux 5.6); on older
// kernels one openat(O_NOFOLLOW) per component, which refuses the same.

#include <cstdint>
#include <string>

#include "common/result.hpp"
#include "common/unique_fd.hpp"

namespace taskscope::common {

/// Opens `path` (absolute, or relative to `dirFd`) with `flags` and no
/// symlink followed in any component. With O_PATH a symlink at the end is
/// refused too. `resolve` adds openat2 RESOLVE_* flags (RESOLVE_NO_XDEV,
/// RESOLVE_BENEATH); the walk on old kernels honours RESOLVE_BENEATH by
/// refusing "..". A symlink is ELOOP, named in the error.
Result<UniqueFd> openNoSymlinks(int dirFd, const std::string& path, int flags, uint64_t resolve = 0);
inline Result<UniqueFd> openNoSymlinks(const std::string& path, int flags) {
    return openNoSymlinks(-100 /* AT_FDCWD */, path, flags);
}

/// "/proc/self/fd/N": the object an fd refers to, for calls that take only
/// a path (mount, connect); no lookup of the original path again.
std::string fdPath(int fd);

}  // namespace taskscope::common
