#include "common/files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "common/unique_fd.hpp"
#include "common/error_names.hpp"

namespace taskscope::common {

namespace {

Result<std::string> readAll(int fd, const std::string& what) {
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errnoError("read " + what, errno);
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

}  // namespace

Result<void> writeAll(int fd, const std::string& data, const std::string& what) {
    size_t off = 0;
    while (off < data.size()) {
        ssize_t n = ::write(fd, data.data() + off, data.size() - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errnoError("write " + what, errno);
        }
        off += static_cast<size_t>(n);
    }
    return {};
}

std::string_view trim(std::string_view s) {
    constexpr std::string_view kSpace = " \t\n\r";
    const auto first = s.find_first_not_of(kSpace);
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(kSpace);
    return s.substr(first, last - first + 1);
}

namespace {

// The read of a file just opened; errno still tells why when it was not.
Result<std::string> readOpened(const UniqueFd& fd, const std::string& what) {
    if (!fd) return errnoError("open " + what, errno, errno == ENOENT ? common::errors::kNotFound : common::errors::kInternal);
    return readAll(fd.get(), what);
}

}  // namespace

Result<std::string> readFile(const std::string& path) {
    return readOpened(UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), path);
}

Result<std::string> readStateFile(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOATIME));
    if (!fd && errno == EPERM) fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    return readOpened(fd, path);
}

Result<std::string> readFileAt(int dirFd, const std::string& name) {
    return readOpened(UniqueFd(::openat(dirFd, name.c_str(), O_RDONLY | O_CLOEXEC)), name);
}

Result<void> writeFileAtomic(const std::string& path, const std::string& content, unsigned mode,
                             Durability durability) {
    const bool sync = durability == Durability::PowerLoss;
    const std::string tmp = path + ".tmp";
    {
        // A tmp file left by a crash keeps its old mode through O_TRUNC.
        ::unlink(tmp.c_str());
        UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode));
        if (!fd) return errnoError("create " + tmp, errno);
        // The umask may have taken bits away, never added any.
        if (auto r = writeAll(fd.get(), content, tmp); !r) return r;
        if (sync && ::fsync(fd.get()) < 0) return errnoError("fsync " + tmp, errno);
    }
    if (::rename(tmp.c_str(), path.c_str()) < 0) return errnoError("rename " + tmp, errno);
    if (!sync) return {};
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dfd) ::fsync(dfd.get());
    return {};
}

Result<void> makeDirs(const std::string& path, unsigned mode) {
    std::string cur;
    size_t pos = 0;
    while (pos != std::string::npos) {
        pos = path.find('/', pos + 1);
        cur = path.substr(0, pos);
        if (cur.empty()) continue;
        if (::mkdir(cur.c_str(), mode) < 0 && errno != EEXIST) return errnoError("mkdir " + cur, errno);
    }
    return {};
}

Result<void> makePrivateDir(const std::string& path, unsigned mode) {
    if (auto r = makeDirs(path, mode); !r) return r;
    if (::chmod(path.c_str(), mode) < 0) return errnoError("chmod " + path, errno);
    return {};
}

Result<void> restrictFiles(const std::string& dir, unsigned mode) {
    UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dfd) return errnoError("open " + dir, errno);
    std::unique_ptr<DIR, int (*)(DIR*)> d(::fdopendir(::dup(dfd.get())), &::closedir);
    if (!d) return errnoError("list " + dir, errno);
    while (auto* e = ::readdir(d.get())) {
        struct stat st {};
        if (::fstatat(dfd.get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)) continue;
        if ((st.st_mode & 07777 & ~mode) == 0) continue;
        if (::fchmodat(dfd.get(), e->d_name, st.st_mode & mode & 07777, 0) < 0)
            return errnoError("chmod " + dir + "/" + e->d_name, errno);
    }
    return {};
}

bool pokeFifo(const std::string& path) {
    // O_NONBLOCK: without a reader the open fails (ENXIO) instead of waiting.
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd) return false;
    struct stat st {};
    if (::fstat(fd.get(), &st) < 0 || !S_ISFIFO(st.st_mode)) return false;
    return ::write(fd.get(), "r", 1) == 1;
}

}  // namespace taskscope::common
