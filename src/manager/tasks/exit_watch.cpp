// SIGCHLD, inotify on the exits directory and the streamer's drain turned
// into task-end events (exit_watch.hpp).
#include "manager/tasks/exit_watch.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "common/files.hpp"
#include "manager/records/exit_record.hpp"
#include "scope/cgroup_host.hpp"
#include "wire/spool.hpp"

namespace taskscope::manager {

namespace {

// An unreadable exit record is read again after 50, 100, 200, 400 ms.
constexpr int kExitReadAttempts = 5;
constexpr std::chrono::milliseconds kExitReadRetryDelay{50};
// A task without a shim is an accident, and rare: on cgroup v1, which says
// nothing when a cgroup empties, one look a second.
constexpr std::chrono::seconds kOrphanLook{1};

}  // namespace

ExitWatch::ExitWatch(common::EventLoop& loop, const StateStore& store, std::string spoolDir,
                     common::Worker& cgroupWorker, ExitEvents& events)
    : loop_(loop), store_(store), spoolDir_(std::move(spoolDir)), cgroupWorker_(cgroupWorker), events_(events) {}

ExitWatch::~ExitWatch() {
    // The loop outlives us (a restart in the unit tier): nothing of ours
    // may fire after.
    for (auto& [unit, r] : reading_)
        if (r.timer) loop_.cancelTimer(r.timer);
    for (auto& [unit, o] : orphans_)
        if (o.timer) loop_.cancelTimer(o.timer);
    if (inotifyWatch_) loop_.removeFd(inotifyWatch_);
    if (signalWatch_) loop_.removeFd(signalWatch_);
    if (inotifyFd_ >= 0) ::close(inotifyFd_);
    if (signalFd_ >= 0) ::close(signalFd_);
}

common::Result<void> ExitWatch::start() {
    // Shims are our children while we run; SIGCHLD tells us to reap them.
    // Blocked in this thread, and so in every worker thread started after.
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    signalFd_ = ::signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (signalFd_ < 0) return common::errnoError("signalfd", errno);
    signalWatch_ = loop_.addFd(signalFd_, POLLIN, [this](short) { reap(); });

    inotifyFd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (inotifyFd_ < 0) return common::errnoError("inotify_init1", errno);
    if (::inotify_add_watch(inotifyFd_, store_.exitsDir().c_str(), IN_MOVED_TO) < 0)
        return common::errnoError("watch " + store_.exitsDir(), errno);
    // The streamer deletes a task's description once it has drained it.
    spoolWd_ = ::inotify_add_watch(inotifyFd_, spoolDir_.c_str(), IN_DELETE);
    if (spoolWd_ < 0) return common::errnoError("watch " + spoolDir_, errno);
    inotifyWatch_ = loop_.addFd(inotifyFd_, POLLIN, [this](short) { onDirEvent(); });
    return {};
}

bool ExitWatch::exitRecordExists(const std::string& unit) const {
    return ::access(store_.exitFile(unit).c_str(), F_OK) == 0;
}

void ExitWatch::reap() {
    signalfd_siginfo info;
    while (::read(signalFd_, &info, sizeof info) == sizeof info) {
    }
    // Shims are the manager's children until it restarts; after that PID 1
    // reaps them and recovery (or the exits directory) notices.
    std::set<pid_t> reaped;
    pid_t pid;
    while ((pid = ::waitpid(-1, nullptr, WNOHANG)) > 0) reaped.insert(pid);
    if (!reaped.empty()) events_.shimsReaped(reaped);
}

void ExitWatch::onDirEvent() {
    alignas(inotify_event) char buf[4096];
    for (;;) {
        const ssize_t n = ::read(inotifyFd_, buf, sizeof buf);
        if (n <= 0) break;
        for (ssize_t off = 0; off < n;) {
            const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
            off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
            // An orphan's cgroup.events (a watch on the file itself: no name).
            if (ev->len == 0) {
                onOrphanEvent(ev->wd, (ev->mask & IN_IGNORED) != 0);
                continue;
            }
            const std::string name = ev->name;
            if (ev->wd == spoolWd_) {
                if (auto unit = wire::unitOfDescription(name); !unit.empty()) events_.spoolDrained(unit);
                continue;
            }
            events_.exitRecorded(name);
        }
    }
}

void ExitWatch::collect(const std::string& unit) {
    auto& r = reading_[unit];
    if (r.timer) loop_.cancelTimer(r.timer);
    r.timer = 0;
    read(unit);
}

void ExitWatch::read(const std::string& unit) {
    auto status = [&]() -> common::Result<task::ExitStatus> {
        auto text = common::readStateFile(store_.exitFile(unit));
        if (!text) return text.error();
        return parseExitFile(*text);
    }();
    auto& r = reading_[unit];
    if (!status && ++r.failures < kExitReadAttempts) {
        const auto delay = kExitReadRetryDelay * (1 << (r.failures - 1));
        r.timer = loop_.addTimer(common::EventLoop::Clock::now() + delay, [this, unit] {
            auto it = reading_.find(unit);
            if (it == reading_.end()) return;
            it->second.timer = 0;
            read(unit);
        });
        return;
    }
    reading_.erase(unit);
    events_.exitRead(unit, std::move(status));
}

void ExitWatch::watchOrphan(const std::string& unit, std::string processesFile, const std::string& eventsFile) {
    if (orphans_.count(unit)) return;
    auto& o = orphans_[unit];
    o.processesFile = std::move(processesFile);
    if (!eventsFile.empty() && inotifyFd_ >= 0) {
        // Removed with the cgroup (IN_IGNORED), which is a look too.
        const int wd = ::inotify_add_watch(inotifyFd_, eventsFile.c_str(), IN_MODIFY);
        if (wd >= 0) {
            o.wd = wd;
            orphanWds_[wd] = unit;
        }
    }
    // Looked at now: it may have emptied before the watch was there.
    lookAtOrphan(unit);
}

void ExitWatch::onOrphanEvent(int wd, bool watchGone) {
    auto it = orphanWds_.find(wd);
    if (it == orphanWds_.end()) return;
    const auto unit = it->second;
    if (watchGone) {
        // The cgroup itself is gone (systemd removed the empty scope): the
        // watch number is free for the kernel to give again.
        orphanWds_.erase(it);
        if (auto o = orphans_.find(unit); o != orphans_.end()) o->second.wd = kWatchGone;
    }
    lookAtOrphan(unit);
}

void ExitWatch::lookAtOrphan(const std::string& unit) {
    auto it = orphans_.find(unit);
    if (it == orphans_.end()) return;
    auto& o = it->second;
    if (o.looking) {
        o.lookAgain = true;
        return;
    }
    o.looking = true;
    // The scope's processes, read off the loop.
    cgroupWorker_.submit([this, unit, file = o.processesFile, alive = std::weak_ptr<int>(lifetime_)]() {
        const bool populated = scope::cgroupHasProcesses(file);
        return std::function<void()>([this, unit, populated, alive] {
            if (alive.expired()) return;
            auto it = orphans_.find(unit);
            if (it == orphans_.end()) return;
            auto& o = it->second;
            o.looking = false;
            if (!populated) {
                endOrphanWatch(unit);
                return events_.orphanEnded(unit);
            }
            if (std::exchange(o.lookAgain, false)) return lookAtOrphan(unit);
            // v2: the next change of `populated` says when. v1: no event.
            if (o.wd != kNoWatch) return;
            o.timer = loop_.addTimer(common::EventLoop::Clock::now() + kOrphanLook, [this, unit] {
                auto it = orphans_.find(unit);
                if (it == orphans_.end()) return;
                it->second.timer = 0;
                lookAtOrphan(unit);
            });
        });
    });
}

void ExitWatch::endOrphanWatch(const std::string& unit) {
    auto it = orphans_.find(unit);
    if (it == orphans_.end()) return;
    if (it->second.timer) loop_.cancelTimer(it->second.timer);
    if (it->second.wd >= 0) {
        (void)::inotify_rm_watch(inotifyFd_, it->second.wd);
        orphanWds_.erase(it->second.wd);
    }
    orphans_.erase(it);
}

void ExitWatch::forget(const std::string& unit) {
    if (auto it = reading_.find(unit); it != reading_.end()) {
        if (it->second.timer) loop_.cancelTimer(it->second.timer);
        reading_.erase(it);
    }
    endOrphanWatch(unit);
}

}  // namespace taskscope::manager
