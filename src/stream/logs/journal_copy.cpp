#include "stream/logs/journal_copy.hpp"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace taskscope::stream::logs {

namespace {

constexpr auto kReconnectInterval = std::chrono::seconds(1);

// One header line: journald reads up to its newline, so none may be inside.
std::string headerLine(std::string s) {
    std::replace_if(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }, '_');
    return s + "\n";
}

}  // namespace

void JournalCopy::setPid(pid_t pid) {
    if (pid == pid_ || pid <= 1) return;
    pid_ = pid;
    identityRead_ = false;
    unattributable_ = false;
}

bool JournalCopy::readIdentity() {
    // The task's own ids for _UID and _GID (the real ones: what ps shows);
    // it has switched to them by the time it writes, and a zombie still
    // has its status file. Unreadable: root's, which is our own.
    identityRead_ = true;
    std::ifstream in(o_.proc + "/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string key;
        unsigned long id = 0;
        if (!(words >> key >> id)) continue;
        if (key == "Uid:") uid_ = static_cast<uid_t>(id);
        if (key == "Gid:") gid_ = static_cast<gid_t>(id);
    }
    return true;
}

bool JournalCopy::connect(Clock::time_point now) {
    if (triedConnect_ && now - lastConnect_ < kReconnectInterval) return false;
    triedConnect_ = true;
    lastConnect_ = now;
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (o_.socketPath.size() >= sizeof sa.sun_path) return false;
    std::memcpy(sa.sun_path, o_.socketPath.data(), o_.socketPath.size());
    common::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return false;
    // Non-blocking: a full backlog (EAGAIN) is journald being away, too.
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) < 0) return false;
    (void)::shutdown(fd.get(), SHUT_RD);
    sock_ = std::move(fd);
    // journald's stream header (journald-stream.c): identifier, unit,
    // priority, level prefix, then syslog, kmsg and console forwarding,
    // all off: the task's lines are not the console's business.
    const std::string header = headerLine(o_.identifier) + headerLine(o_.unit) + std::to_string(o_.priority) +
                               "\n0\n0\n0\n0\n";
    queue_.insert(0, header);
    headerLeft_ = header.size();
    midLine_ = false;
    blocked_ = false;
    return true;
}

void JournalCopy::disconnect() {
    sock_.reset();
    blocked_ = false;
    // What journald had not read yet is lost with the socket; the next
    // connection starts a new stream, at the start of a line.
    const std::string_view tasks = std::string_view(queue_).substr(headerLeft_);
    if (!tasks.empty()) {
        // The queue's lines are older than the current one: counted here.
        counts_.bytesDropped += tasks.size();
        counts_.linesDropped += static_cast<uint64_t>(std::count(tasks.begin(), tasks.end(), '\n'));
        if (tasks.back() != '\n') {
            counts_.linesDropped += lineCounted_ ? 0 : 1;
            lineCounted_ = true;
        }
    }
    if (midLine_) skipping_ = true;  // the rest of that line would start the new stream
    midLine_ = false;
    queue_.clear();
    headerLeft_ = 0;
}

void JournalCopy::drop(const char* data, size_t size) {
    counts_.bytesDropped += size;
    while (size) {
        if (!lineCounted_) {
            ++counts_.linesDropped;
            lineCounted_ = true;
        }
        const auto* nl = static_cast<const char*>(std::memchr(data, '\n', size));
        if (!nl) return;
        const size_t k = static_cast<size_t>(nl - data) + 1;
        data += k;
        size -= k;
        lineCounted_ = false;
    }
}

void JournalCopy::queue(const char* data, size_t size) {
    if (size == 0) return;
    const size_t queued = queue_.size() - headerLeft_;
    const size_t room = o_.maxQueued > queued ? o_.maxQueued - queued : 0;
    if (size <= room) {
        queue_.append(data, size);
        midLine_ = data[size - 1] != '\n';
        if (std::memchr(data, '\n', size)) lineCounted_ = false;
        return;
    }
    // Full: the whole lines that fit go, the rest is dropped.
    size_t keep = 0;
    if (room)
        if (const auto* last = static_cast<const char*>(::memrchr(data, '\n', room)))
            keep = static_cast<size_t>(last - data) + 1;
    if (keep) {
        queue_.append(data, keep);
        midLine_ = false;
        lineCounted_ = false;
    } else if (midLine_) {
        // The line in progress is cut where it stands (one byte past the
        // bound), as journald cuts a line past LineMax.
        queue_ += '\n';
        midLine_ = false;
    }
    drop(data + keep, size - keep);
    skipping_ = data[size - 1] != '\n';
}

void JournalCopy::append(const char* data, size_t size, Clock::time_point now) {
    if (size == 0) return;
    if (unattributable_) return drop(data, size);
    if (skipping_) {
        const auto* nl = static_cast<const char*>(std::memchr(data, '\n', size));
        const size_t k = nl ? static_cast<size_t>(nl - data) + 1 : size;
        drop(data, k);
        if (!nl) return;
        skipping_ = false;
        data += k;
        size -= k;
        if (size == 0) return;
    }
    // Before the pid is known nothing can be placed: queued (bounded) until then.
    if (pid_ == 0) return queue(data, size);
    if (!sock_ && !connect(now)) {
        // journald is away: a whole line or nothing, once it is back. The
        // queue's older lines are counted first.
        dropQueuedOnly();
        drop(data, size);
        skipping_ = data[size - 1] != '\n';
        return;
    }
    queue(data, size);
    flush(now);
}

void JournalCopy::dropQueuedOnly() {
    // Bytes queued before the pid was known, with no socket to take them.
    if (!sock_ && !queue_.empty()) disconnect();
}

void JournalCopy::flush(Clock::time_point now) {
    if (unattributable_ || pid_ == 0 || queue_.empty()) return;
    if (!sock_ && !connect(now)) {
        dropQueuedOnly();
        return;
    }
    if (!identityRead_) readIdentity();
    blocked_ = false;
    while (!queue_.empty()) {
        iovec iov{queue_.data(), queue_.size()};
        union {
            char buf[CMSG_SPACE(sizeof(ucred))];
            cmsghdr align;
        } control{};
        msghdr m{};
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = control.buf;
        m.msg_controllen = sizeof control.buf;
        cmsghdr* c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_CREDENTIALS;
        c->cmsg_len = CMSG_LEN(sizeof(ucred));
        const ucred who{pid_, uid_, gid_};
        std::memcpy(CMSG_DATA(c), &who, sizeof who);
        const ssize_t n = ::sendmsg(sock_.get(), &m, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            const auto sent = static_cast<size_t>(n);
            const size_t header = std::min(sent, headerLeft_);
            headerLeft_ -= header;
            counts_.bytesSent += sent - header;
            queue_.erase(0, sent);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            blocked_ = true;
            return;
        }
        if (n < 0 && (errno == ESRCH || errno == EPERM)) {
            // ESRCH: the pid is reaped (its shim is gone before we were
            // done); EPERM: we may not speak for it (no CAP_SYS_ADMIN).
            // Either way nothing of this task can be placed any more.
            unattributable_ = true;
            disconnect();
            return;
        }
        disconnect();  // EPIPE, ECONNRESET: journald went away
        return;
    }
}

bool JournalCopy::settled() const {
    if (!queue_.empty()) return false;
    if (!sock_) return true;
    int unread = 0;
    if (::ioctl(sock_.get(), SIOCOUTQ, &unread) < 0) return true;
    return unread == 0;
}

void JournalCopy::abandon() {
    // What journald holds unread still reaches it; what is queued never will.
    disconnect();
}

}  // namespace taskscope::stream::logs
