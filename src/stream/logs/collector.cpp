#include "stream/logs/collector.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace taskscope::stream::logs {

namespace {
constexpr size_t kCollectChunk = 1 << 20;  // most bytes moved per step
constexpr size_t kCopyBuf = 1 << 16;
constexpr auto kRetryInterval = std::chrono::seconds(1);
}  // namespace

StreamCollector::Step StreamCollector::copySome(size_t len, uint64_t& moved, int& err) {
    // Fallback for file systems without splice support. A crash between
    // read and write loses this one chunk.
    static char buf[kCopyBuf];
    const ssize_t n = ::read(fifo_.get(), buf, std::min(len, sizeof buf));
    if (n < 0) return errno == EAGAIN || errno == EINTR ? Step::Empty : (err = errno, Step::WriteFailed);
    if (n == 0) return Step::Empty;
    if (tee_) tee_(buf, static_cast<size_t>(n));
    size_t done = 0;
    while (done < static_cast<size_t>(n)) {
        const ssize_t w =
            ::pwrite(rotator_.fd(), buf + done, static_cast<size_t>(n) - done, static_cast<off_t>(rotator_.offset()));
        if (w < 0) {
            if (errno == EINTR) continue;
            err = errno;
            dropped_ += static_cast<uint64_t>(n) - done;
            return Step::WriteFailed;
        }
        done += static_cast<size_t>(w);
        moved += static_cast<uint64_t>(w);
        if (auto r = rotator_.advance(static_cast<uint64_t>(w)); !r) {
            err = EIO;
            return Step::WriteFailed;
        }
    }
    return Step::Moved;
}

void StreamCollector::teeFromFile(uint64_t offset, size_t size) {
    // Before advance(): a rotation would change the file. Splice never
    // crosses one (it moves at most room() bytes).
    static char buf[kCopyBuf];
    while (size) {
        const ssize_t n = ::pread(rotator_.fd(), buf, std::min(size, sizeof buf), static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // cannot happen: the bytes were just written
        tee_(buf, static_cast<size_t>(n));
        offset += static_cast<uint64_t>(n);
        size -= static_cast<size_t>(n);
    }
}

StreamCollector::Step StreamCollector::moveSome(uint64_t budget, uint64_t& moved, int& err) {
    if (rotator_.fd() < 0) {
        // The log file could not be opened before (a full disk, a missing directory).
        if (auto r = rotator_.open(); !r) {
            err = errno ? errno : EIO;
            return Step::WriteFailed;
        }
    }
    if (rotator_.room() == 0) {
        // A rotation that failed earlier (e.g. no inode for the new file).
        if (auto r = rotator_.advance(0); !r || rotator_.room() == 0) {
            err = ENOSPC;
            return Step::WriteFailed;
        }
    }
    const size_t len = static_cast<size_t>(std::min<uint64_t>({budget, rotator_.room(), kCollectChunk}));
    if (!useSplice_) return copySome(len, moved, err);
    loff_t off = static_cast<loff_t>(rotator_.offset());
    const ssize_t n = ::splice(fifo_.get(), nullptr, rotator_.fd(), &off, len, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
    if (n > 0) {
        moved += static_cast<uint64_t>(n);
        if (tee_) teeFromFile(rotator_.offset(), static_cast<size_t>(n));
        if (auto r = rotator_.advance(static_cast<uint64_t>(n)); !r) {
            err = EIO;
            return Step::WriteFailed;
        }
        return Step::Moved;
    }
    // We hold a write end of the fifo ourselves: 0 (EOF) never comes.
    if (n == 0 || errno == EAGAIN || errno == EINTR) return Step::Empty;
    if (errno == EINVAL || errno == ENOSYS) {
        useSplice_ = false;
        return copySome(len, moved, err);
    }
    err = errno;
    return Step::WriteFailed;
}

StreamCollector::Drained StreamCollector::drain(uint64_t budget, Clock::time_point now) {
    Drained d;
    uint64_t spent = 0;  // moved or dropped: both count, for fairness between tasks
    if (dropping_ && now - lastTry_ >= kRetryInterval) {
        // Probe: does writing work again?
        lastTry_ = now;
        int err = 0;
        const auto step = moveSome(budget, d.moved, err);
        spent = d.moved;
        if (step == Step::Moved) {
            dropping_ = false;
            d.recoveredAfterDropping = std::exchange(dropped_, 0);
        } else if (step == Step::Empty) {
            d.empty = true;
            return d;
        }
    }
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
        const auto step = moveSome(budget - spent, d.moved, err);
        spent += d.moved - before;
        if (step == Step::Empty) {
            d.empty = true;
            return d;
        }
        if (step == Step::WriteFailed) {
            dropping_ = true;
            lastTry_ = now;
            d.failed = common::errnoError("write " + logFilePath(rotator_.dir(), rotator_.base(), rotator_.index()),
                                          err, "LogWriteFailed");
        }
    }
    return d;
}

}  // namespace taskscope::stream::logs
