#include "stream/logs/forward_collector.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/safe_path.hpp"

namespace taskscope::stream::logs {

namespace {
constexpr size_t kForwardChunk = 1 << 16;  // most bytes per step (also a fifo's default size)
constexpr auto kReopenInterval = std::chrono::seconds(1);
constexpr const char kForwardFailed[] = "LogWriteFailed";

bool isNullDevice(const struct stat& st) {
    return S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
}

// Nothing at the path: a new regular file, as the shim makes one. O_EXCL
// never follows a symlink; the directory is reached without following any.
// `existed`: something is there after all (a symlink the first look refused).
common::Result<common::UniqueFd> createOut(const std::string& path, bool& existed) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
    auto d = common::openNoSymlinks(dir, O_PATH | O_DIRECTORY);
    if (!d) return d.error();
    common::UniqueFd fd(::openat(d->get(), path.c_str() + slash + 1,
                                 O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600));
    existed = !fd && errno == EEXIST;
    if (!fd) return common::errnoError("create " + path, errno, kForwardFailed);
    return fd;
}
}  // namespace

ForwardCollector::ForwardCollector(common::UniqueFd fifo, std::string path, uid_t owner)
    : fifo_(std::move(fifo)), path_(path.empty() ? "/dev/null" : std::move(path)), owner_(owner) {}

common::Result<void> ForwardCollector::openOut() {
    auto p = common::openNoSymlinks(path_, O_PATH);
    if (!p) {
        bool existed = false;
        auto made = createOut(path_, existed);
        if (!made) return existed ? common::Error{kForwardFailed, p.error().message} : made.error();
        out_ = std::move(*made);
        outIsPipe_ = false;
        return {};
    }
    struct stat st {};
    if (::fstat(p->get(), &st) < 0) return common::errnoError("stat " + path_, errno, kForwardFailed);
    int flags = 0;
    if (S_ISFIFO(st.st_mode))
        flags = O_RDWR | O_NONBLOCK;  // a reader always: see the header
    else if (S_ISREG(st.st_mode) || isNullDevice(st))
        flags = O_WRONLY | O_APPEND;
    else
        return common::errnoError(path_ + " is neither a fifo nor a regular file", ENXIO, kForwardFailed);
    if (!isNullDevice(st)) {
        // The shim's rules for a task's output (src/shim/safe_open.c): a
        // path a task could have swapped for root's files is refused.
        if (st.st_uid != 0 && st.st_uid != owner_)
            return common::errnoError(path_ + " is owned by uid " + std::to_string(st.st_uid) +
                                          ", neither root nor the task's user",
                                      EPERM, kForwardFailed);
        if (st.st_nlink != 1) return common::errnoError(path_ + " has more than one link", EMLINK, kForwardFailed);
    }
    // The very inode looked at, through the fd: never the name again.
    common::UniqueFd fd(::open(common::fdPath(p->get()).c_str(), flags | O_CLOEXEC | O_NOCTTY));
    if (!fd) return common::errnoError("open " + path_, errno, kForwardFailed);
    out_ = std::move(fd);
    outIsPipe_ = S_ISFIFO(st.st_mode);
    return {};
}

ForwardCollector::Step ForwardCollector::emptyOrBlocked() const {
    int queued = 0;
    if (::ioctl(fifo_.get(), FIONREAD, &queued) == 0 && queued > 0) return Step::Blocked;
    return Step::Empty;
}

ForwardCollector::Step ForwardCollector::pipeSome(size_t len, uint64_t& moved, int& err) {
    ssize_t n;
    if (tee_) {
        // Duplicated into the way out, not yet taken from the fifo; then
        // taken, exactly that many, for the journal.
        static char buf[kForwardChunk];
        n = ::tee(fifo_.get(), out_.get(), std::min(len, sizeof buf), SPLICE_F_NONBLOCK);
        if (n > 0) {
            size_t got = 0;
            while (got < static_cast<size_t>(n)) {
                const ssize_t r = ::read(fifo_.get(), buf + got, static_cast<size_t>(n) - got);
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) break;  // cannot happen: we are the fifo's only reader
                got += static_cast<size_t>(r);
            }
            tee_(buf, got);
            moved += got;
            return Step::Moved;
        }
    } else {
        n = ::splice(fifo_.get(), nullptr, out_.get(), nullptr, len, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
        if (n > 0) {
            moved += static_cast<uint64_t>(n);
            return Step::Moved;
        }
    }
    // We hold a write end of the spool fifo: 0 (EOF) never comes.
    if (n == 0 || errno == EAGAIN || errno == EINTR) return emptyOrBlocked();
    err = errno;
    return Step::WriteFailed;
}

ForwardCollector::Step ForwardCollector::copySome(size_t len, uint64_t& moved, int& err) {
    // A regular file (or /dev/null): written without waiting, as the shim's
    // O_APPEND file would be. A crash between read and write loses this chunk.
    static char buf[kForwardChunk];
    const ssize_t n = ::read(fifo_.get(), buf, std::min(len, sizeof buf));
    if (n < 0) return errno == EAGAIN || errno == EINTR ? Step::Empty : (err = errno, Step::WriteFailed);
    if (n == 0) return Step::Empty;
    size_t done = 0;
    while (done < static_cast<size_t>(n)) {
        const ssize_t w = ::write(out_.get(), buf + done, static_cast<size_t>(n) - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            err = errno;
            dropped_ += static_cast<uint64_t>(n) - done;
            if (tee_) tee_(buf, static_cast<size_t>(n));
            return Step::WriteFailed;
        }
        done += static_cast<size_t>(w);
        moved += static_cast<uint64_t>(w);
    }
    if (tee_) tee_(buf, static_cast<size_t>(n));
    return Step::Moved;
}

void ForwardCollector::giveUp() {
    gaveUp_ = true;
    dropping_ = true;
    blocked_ = false;
}

ForwardCollector::Drained ForwardCollector::drain(uint64_t budget, Clock::time_point now) {
    Drained d;
    blocked_ = false;
    if (!out_ && !gaveUp_ && (!tried_ || now - lastTry_ >= kReopenInterval)) {
        // Opened on the first drain, and again at most once a second after
        // it failed (or writing did): a path Nomad has not made yet, a
        // file system that was full.
        tried_ = true;
        lastTry_ = now;
        if (auto r = openOut(); !r) {
            if (!dropping_) d.failed = common::Error{kForwardFailed, r.error().message};
            dropping_ = true;
        } else if (dropping_) {
            dropping_ = false;
            d.recoveredAfterDropping = std::exchange(dropped_, 0);
        }
    }
    uint64_t spent = 0;  // moved or dropped: both count, for fairness between tasks
    while (spent < budget) {
        if (dropping_) {
            if (discardUpTo(fifo_.get(), budget, spent, dropped_)) {
                d.empty = true;
                return d;
            }
            continue;
        }
        int err = 0;
        const uint64_t before = d.moved;
        const size_t len = static_cast<size_t>(std::min<uint64_t>(budget - spent, kForwardChunk));
        const auto step = outIsPipe_ ? pipeSome(len, d.moved, err) : copySome(len, d.moved, err);
        spent += d.moved - before;
        if (step == Step::Empty) {
            d.empty = true;
            return d;
        }
        if (step == Step::Blocked) {
            blocked_ = true;
            d.blocked = true;
            return d;
        }
        if (step == Step::WriteFailed) {
            dropping_ = true;
            lastTry_ = now;
            out_.reset();  // opened again on a later drain
            d.failed = common::errnoError("write " + path_, err, kForwardFailed);
        }
    }
    return d;
}

}  // namespace taskscope::stream::logs
