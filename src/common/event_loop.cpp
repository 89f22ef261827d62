#include "common/event_loop.hpp"

#include <sdbus-c++/IConnection.h>

#include <cerrno>
#include <climits>
#include <stdexcept>
#include <system_error>

namespace taskscope::common {

uint64_t EventLoop::addFd(int fd, short events, FdHandler handler) {
    const auto h = nextHandle_++;
    watches_.emplace(h, Watch{fd, events, std::move(handler)});
    return h;
}

void EventLoop::removeFd(uint64_t handle) { watches_.erase(handle); }

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
            if (bus->processPendingRequest()) progressed = true;
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
    std::vector<uint64_t> handles;
    while (running_) {
        dispatchBuses();
        if (!running_) break;

        fds.clear();
        handles.clear();
        auto busDeadline = Clock::time_point::max();
        for (auto* bus : buses_) {
            const auto pd = bus->getEventLoopPollData();
            fds.push_back({pd.fd, pd.events, 0});
            if (pd.timeout_usec != UINT64_MAX) {
                // sdbus reports an absolute CLOCK_MONOTONIC deadline, the
                // same clock steady_clock uses on Linux.
                const auto when = Clock::time_point(std::chrono::microseconds(pd.timeout_usec));
                if (when < busDeadline) busDeadline = when;
            }
        }
        const size_t firstWatch = fds.size();
        for (const auto& [h, w] : watches_) {
            fds.push_back({w.fd, w.events, 0});
            handles.push_back(h);
        }

        const int n = ::poll(fds.data(), fds.size(), posted_.empty() ? nextTimeoutMs(busDeadline) : 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw std::system_error(errno, std::generic_category(), "poll");
        }
        for (size_t i = firstWatch; i < fds.size() && running_; ++i) {
            if (!fds[i].revents) continue;
            auto it = watches_.find(handles[i - firstWatch]);
            if (it == watches_.end()) continue;  // removed by an earlier handler
            auto handler = it->second.handler;  // copy: the handler may remove itself
            handler(fds[i].revents);
            dispatchBusesIfDue();
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
