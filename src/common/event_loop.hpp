#pragma once
// A single-threaded poll(2) loop that drives sdbus-c++ connections, file
// descriptors, timers and signals together. One thread owns all daemon
// state, so handlers need no locks; nothing in a daemon sleeps to wait.

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace sdbus {
class IConnection;
}

namespace taskscope::common {

class EventLoop {
public:
    using Clock = std::chrono::steady_clock;
    using FdHandler = std::function<void(short revents)>;
    using TimerHandler = std::function<void()>;

    EventLoop() = default;
    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;

    /// Watches fd for events until removeFd; returns a handle.
    uint64_t addFd(int fd, short events, FdHandler handler);
    void removeFd(uint64_t handle);

    /// Calls handler once at `when`; returns a handle for cancelTimer.
    uint64_t addTimer(Clock::time_point when, TimerHandler handler);
    void cancelTimer(uint64_t handle);

    /// Dispatches the connection's messages from this loop.
    void addBus(sdbus::IConnection& connection);

    /// Runs until quit(); returns the code given to quit().
    int run();
    void quit(int code = 0);

private:
    struct Watch {
        int fd;
        short events;
        FdHandler handler;
    };
    struct Timer {
        Clock::time_point when;
        TimerHandler handler;
    };

    void dispatchBuses();
    int nextTimeoutMs(Clock::time_point busDeadline) const;
    void fireDueTimers();

    uint64_t nextHandle_ = 1;
    std::map<uint64_t, Watch> watches_;
    std::map<uint64_t, Timer> timers_;
    std::vector<sdbus::IConnection*> buses_;
    bool running_ = false;
    int exitCode_ = 0;
};

}  // namespace taskscope::common
