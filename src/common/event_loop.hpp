#pragma once
// A single-threaded loop that drives sdbus-c++ connections, file
// descriptors, timers and signals together. One thread owns all daemon
// state, so handlers need no locks; nothing in a daemon sleeps to wait.
// Watched fds live in an epoll set, so a wakeup costs what is ready, not
// what is watched (the streamer watches two fifos per task: ~20,000 on a
// full node); the bus connections, whose wanted events change with every
// message, are poll(2)ed beside the epoll fd.

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "common/unique_fd.hpp"

namespace sdbus {
class IConnection;
}

namespace taskscope::common {

class EventLoop {
public:
    using Clock = std::chrono::steady_clock;
    using FdHandler = std::function<void(short revents)>;
    using TimerHandler = std::function<void()>;

    EventLoop();
    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;

    /// Watches fd for events (poll(2)'s bits) until removeFd; returns a
    /// handle. Several watches may share an fd; each gets only its own
    /// events, and POLLERR and POLLHUP. A fd epoll cannot watch (a regular
    /// file) is always ready, as poll(2) has it.
    uint64_t addFd(int fd, short events, FdHandler handler);
    void removeFd(uint64_t handle);

    /// Calls handler once at `when`; returns a handle for cancelTimer.
    uint64_t addTimer(Clock::time_point when, TimerHandler handler);
    void cancelTimer(uint64_t handle);

    /// Dispatches the connection's messages from this loop.
    void addBus(sdbus::IConnection& connection);

    /// Runs `work` on a later turn, in the order posted, one piece per turn
    /// with the buses dispatched before each: work cut into posted pieces
    /// never keeps a caller's read waiting for more than one piece.
    void post(std::function<void()> work);

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

    /// Sets the epoll registration of fd to what its watches want.
    void registerFd(int fd);
    void serveFd(int fd, short revents);
    void dispatchBuses();
    /// Between two handlers: the buses again once kBusTurn has passed since
    /// they last were, so no run of ready fds, due timers or posted work
    /// keeps the bus's callers waiting for all of them.
    void dispatchBusesIfDue();
    int nextTimeoutMs(Clock::time_point busDeadline) const;
    void fireDueTimers();

    uint64_t nextHandle_ = 1;
    std::map<uint64_t, Watch> watches_;
    std::unordered_map<int, std::vector<uint64_t>> byFd_;  ///< the watches of each fd
    std::set<int> alwaysReady_;  ///< watched fds epoll refused (EPERM: regular files)
    UniqueFd epoll_;
    std::map<uint64_t, Timer> timers_;
    std::vector<sdbus::IConnection*> buses_;
    Clock::time_point lastDispatch_{};
    std::deque<std::function<void()>> posted_;
    bool running_ = false;
    int exitCode_ = 0;
};

}  // namespace taskscope::common
