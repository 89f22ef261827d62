#include "stream/logs/log_session.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace taskscope::stream::logs {

namespace {
constexpr size_t kSpliceChunk = 1 << 20;  // most bytes moved per splice
constexpr uint64_t kBudget = 4 << 20;     // per wakeup: sessions and collectors take turns
}  // namespace

LogSession::LogSession(common::EventLoop& loop, common::UniqueFd pipe, std::string unit, std::string dir,
                       std::string base, LogPosition start, bool follow, bool complete, std::function<void()> finished)
    : loop_(loop),
      pipe_(std::move(pipe)),
      unit_(std::move(unit)),
      dir_(std::move(dir)),
      base_(std::move(base)),
      index_(start.index),
      offset_(start.offset),
      follow_(follow),
      complete_(complete),
      finished_(std::move(finished)) {}

LogSession::~LogSession() {
    if (watch_) loop_.removeFd(watch_);
}

void LogSession::watch(short events) {
    if (watch_) loop_.removeFd(watch_);
    // With events 0, poll still reports POLLERR once the reader is gone.
    watch_ = loop_.addFd(pipe_.get(), events, [this](short revents) {
        if (revents & (POLLERR | POLLHUP | POLLNVAL))
            finish();
        else
            pump();
    });
}

void LogSession::wake() {
    if (idle_ && !done_) pump();
}

void LogSession::markComplete() {
    complete_ = true;
    wake();
}

void LogSession::finish() {
    if (done_) return;
    done_ = true;
    if (watch_) loop_.removeFd(std::exchange(watch_, 0));
    pipe_.reset();
    file_.reset();
    finished_();
}

bool LogSession::openCurrent() {
    // The file at index_, or the first one kept after it (a slow reader may
    // have been overtaken by the deletion of old files).
    for (;;) {
        const auto path = logFilePath(dir_, base_, index_);
        common::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
        if (fd) {
            file_ = std::move(fd);
            return true;
        }
        uint64_t next = 0;
        if (!nextFile(listLogFiles(dir_, base_), index_, next)) return false;
        index_ = next;
        offset_ = 0;
    }
}

void LogSession::pump() {
    idle_ = false;
    uint64_t sent = 0;
    while (sent < kBudget) {
        if (!file_ && !openCurrent()) break;  // nothing written yet: wait like at the end
        loff_t off = static_cast<loff_t>(offset_);
        ssize_t n = ::splice(file_.get(), &off, pipe_.get(), nullptr, kSpliceChunk, SPLICE_F_NONBLOCK);
        if (n < 0 && errno == EINVAL) {
            char buf[65536];
            n = ::pread(file_.get(), buf, sizeof buf, static_cast<off_t>(offset_));
            if (n > 0) n = ::write(pipe_.get(), buf, static_cast<size_t>(n));  // the rest is read again next time
        }
        if (n > 0) {
            offset_ += static_cast<uint64_t>(n);
            sent += static_cast<uint64_t>(n);
            continue;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                watch(POLLOUT);
                return;
            }
            finish();  // EPIPE: the reader went away
            return;
        }
        // End of this file: the next one exists only once this one is full.
        uint64_t next = 0;
        if (!nextFile(listLogFiles(dir_, base_), index_, next)) break;
        file_.reset();
        index_ = next;
        offset_ = 0;
    }
    if (sent >= kBudget) {
        watch(POLLOUT);
        return;
    }
    if (!follow_ || complete_) {
        finish();
        return;
    }
    idle_ = true;
    watch(0);
}

}  // namespace taskscope::stream::logs
