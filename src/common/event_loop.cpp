#include "common/event_loop.hpp"

#include <fcntl.h>
#include <sys/epoll.h>

#include "common/sdbus_compat.hpp"

#include <cerrno>
#include <climits>
#include <stdexcept>
#include <system_error>

namespace taskscope::common {

EventLoop::EventLoop() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
    if (!epoll_) throw std::system_error(errno, std::generic_category(), "epoll_create1");
}

uint64_t EventLoop::addFd(int fd, short events, FdHandler handler) {
    const auto h = nextHandle_++;
    watches_.emplace(h, Watch{fd, events, std::move(handler)});
    byFd_[fd].push_back(h);
    registerFd(fd);
    return h;
}

void EventLoop::removeFd(uint64_t handle) {
    auto it = watches_.find(handle);
    if (it == watches_.end()) return;
    const int fd = it->second.fd;
    watches_.erase(it);
    auto& handles = byFd_[fd];
    std::erase(handles, handle);
    if (handles.empty()) byFd_.erase(fd);
    registerFd(fd);
}

void EventLoop::registerFd(int fd) {
    const auto it = byFd_.find(fd);
    if (it == byFd_.end()) {
        alwaysReady_.erase(fd);
        // Gone already when its owner closed it first: nothing to undo.
        (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
        return;
    }
    if (alwaysReady_.count(fd)) return;
    uint32_t wanted = 0;
    for (auto h : it->second) wanted |= static_cast<uint16_t>(watches_.at(h).events);
    epoll_event ev{};
    ev.events = wanted;  // poll's bits are epoll's (POLLIN == EPOLLIN, ...); level-triggered like poll
    ev.data.fd = fd;
    // The kernel forgets a registration once the fd's file is closed, and
    // keeps one whose fd number was closed while the file lives on: either
    // way round, the other call fixes it.
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev) == 0) return;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) == 0) return;
    if (errno == EEXIST && ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev) == 0) return;
    // EPERM: a regular file or directory, always ready to poll(2). EBADF:
    // not open; poll(2) reports POLLNVAL and so does serveFd's turn.
    alwaysReady_.insert(fd);
}

void EventLoop::serveFd(int fd, short revents) {
    auto it = byFd_.find(fd);
    if (it == byFd_.end()) return;
    const auto handles = it->second;  // copy: a handler may add or remove watches
    for (auto h : handles) {
        auto w = watches_.find(h);
        if (w == watches_.end()) continue;  // removed by an earlier handler
        const short mine = static_cast<short>(revents & (w->second.events | POLLERR | POLLHUP | POLLNVAL));
        if (!mine) continue;
        auto handler = w->second.handler;  // copy: the handler may remove itself
        handler(mine);
        dispatchBusesIfDue();
        if (!running_) return;
    }
}

uint64_t EventLoop::addTimer(Clock::time_point when, TimerHandler handler) {
    const auto h = nextHandle_++;
    timers_.emplace(h, Timer{when, std::move(handler)});
    return h;
}

void EventLoop::cancelTimer(uint64_t handle) { timers_.erase(handle); }

namespace {
// Long enough that a burst of small handlers (log fifos in the streamer)
// costs no extra syscalls, short against a caller's patience.
constexpr auto kBusTurn = std::chrono::milliseconds(2);
}  // namespace

void EventLoop::addBus(sdbus::IConnection& connection) { buses_.push_back(&connection); }

void EventLoop::post(std::function<void()> work) { posted_.push_back(std::move(work)); }

void EventLoop::quit(int code) {
    running_ = false;
    exitCode_ = code;
}

void EventLoop::dispatchBuses() {
    // One message from each connection in turn, not one drained before the
    // next: a burst of systemd's signals on one must not hold the callers'
    // reads waiting on the other.
    for (bool progressed = true; progressed;) {
        progressed = false;
        for (auto* bus : buses_)
            if (sdbus_compat::processPending(*bus)) progressed = true;
    }
    lastDispatch_ = Clock::now();
}

void EventLoop::dispatchBusesIfDue() {
    if (running_ && !buses_.empty() && Clock::now() - lastDispatch_ >= kBusTurn) dispatchBuses();
}

int EventLoop::nextTimeoutMs(Clock::time_point busDeadline) const {
    auto deadline = busDeadline;
    for (const auto& [h, t] : timers_)
        if (t.when < deadline) deadline = t.when;
    if (deadline == Clock::time_point::max()) return -1;
    const auto now = Clock::now();
    if (deadline <= now) return 0;
    // Round up so a timer never fires a millisecond early and spins.
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now).count();
    return static_cast<int>(std::min<long long>((us + 999) / 1000, INT_MAX));
}

void EventLoop::fireDueTimers() {
    const auto now = Clock::now();
    std::vector<uint64_t> due;
    for (const auto& [h, t] : timers_)
        if (t.when <= now) due.push_back(h);
    for (auto h : due) {
        auto it = timers_.find(h);
        if (it == timers_.end()) continue;  // cancelled by an earlier timer
        auto handler = std::move(it->second.handler);
        timers_.erase(it);
        handler();
        dispatchBusesIfDue();
    }
}

int EventLoop::run() {
    running_ = true;
    std::vector<pollfd> fds;
    std::vector<epoll_event> ready(1024);
    while (running_) {
        dispatchBuses();
        if (!running_) break;

        fds.clear();
        auto busDeadline = Clock::time_point::max();
        for (auto* bus : buses_) {
            const auto wait = sdbus_compat::busWait(*bus);
            wait.addTo(fds);
            if (wait.deadline && *wait.deadline < busDeadline) busDeadline = *wait.deadline;
        }
        fds.push_back({epoll_.get(), POLLIN, 0});

        const bool busy = !posted_.empty() || !alwaysReady_.empty();
        const int n = ::poll(fds.data(), fds.size(), busy ? 0 : nextTimeoutMs(busDeadline));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw std::system_error(errno, std::generic_category(), "poll");
        }
        if (fds.back().revents) {
            const int k = ::epoll_wait(epoll_.get(), ready.data(), static_cast<int>(ready.size()), 0);
            for (int i = 0; i < k && running_; ++i)
                serveFd(ready[static_cast<size_t>(i)].data.fd, static_cast<short>(ready[static_cast<size_t>(i)].events));
        }
        if (!alwaysReady_.empty()) {
            const std::vector<int> always(alwaysReady_.begin(), alwaysReady_.end());
            for (int fd : always) {
                if (!running_) break;
                const short rev = ::fcntl(fd, F_GETFD) < 0 ? POLLNVAL : (POLLIN | POLLOUT);
                serveFd(fd, rev);
            }
        }
        if (running_) fireDueTimers();
        if (running_ && !posted_.empty()) {
            auto work = std::move(posted_.front());
            posted_.pop_front();
            work();
        }
    }
    return exitCode_;
}

}  // namespace taskscope::common
