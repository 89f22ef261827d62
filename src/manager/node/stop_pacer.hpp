#pragma once
// StopTask's signals, sent at the pace systemd collects the scopes they
// empty, leaving it moments with nothing to do (issue 31).
//
// systemd handles every emptied cgroup before it reads its bus (its
// cgroup-empty event source runs at SD_EVENT_PRIORITY_NORMAL-5, the bus at
// NORMAL: src/core/cgroup.c manager_setup_cgroup(), src/core/dbus.c), and
// it runs queued jobs only when nothing else is pending (its run queue is
// at SD_EVENT_PRIORITY_IDLE, src/core/manager.c), several ms of PID 1 per
// collected scope. A drain that signalled 10,000 tasks at once therefore
// held the jobs of every new task's start until the last scope was
// collected: 80 s in the test bed.
//
// So at most `window` stops are in flight at once. One is in flight from
// its signal until a job that systemd ran after the task ended (its scope
// emptied: the registry says so when the shim exits) is done (a
// round trip through PID 1's run queue: by then it had handled what
// emptied before, and had run the jobs queued meanwhile, a new start's
// among them), or until the task has outlived its signal by `slowAfter`
// and a round trip sent after that is done (a graceful shutdown: its end
// comes at its own pace, so a long grace does not hold back the others'
// stops). That round trip matters: a task can look slow only because
// its end has not reached the manager yet (its exit record waits behind
// a drain's writes), and a place freed on time alone let a drain signal
// hundreds of tasks while PID 1, busy collecting their scopes, read no
// call at all (stop 42: 386 scopes in 10 s with a start's call unread,
// 1,000 tasks in the test bed). The others wait their turn, in the
// order asked; a kill without grace goes ahead of them. A task that ends
// while it waits leaves the queue. window 0: every stop at once.
//
// One round trip serves every task that ended before it was sent, so the
// pace is systemd's own, whatever the node's speed.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/event_loop.hpp"

namespace taskscope::manager {

class StopPacer {
public:
    /// Sends the stop of `unit` now (its signal, its grace timer).
    using Admit = std::function<void(const std::string& unit)>;
    /// A round trip through systemd's run queue; `answered` runs once it is
    /// done (also when it failed: nothing waits for ever).
    using RoundTrip = std::function<void(std::function<void()> answered)>;

    StopPacer(size_t window, std::chrono::milliseconds slowAfter, common::EventLoop* loop, Admit admit,
              RoundTrip roundTrip);
    ~StopPacer();
    StopPacer(const StopPacer&) = delete;
    StopPacer& operator=(const StopPacer&) = delete;

    /// Asks for `unit`'s stop: admitted at once (before this returns) when
    /// the window has room, queued otherwise; `first` puts it ahead of the
    /// queue. Asked again while queued: it keeps its place (or goes first).
    void request(const std::string& unit, bool first);
    /// `unit` has ended (or is gone): it leaves the queue, or its place in
    /// the window frees after the next round trip.
    void ended(const std::string& unit);

    bool queued(const std::string& unit) const;
    size_t queueLength() const { return queue_.size(); }
    /// Stops holding the window: signalled and not yet ended, ended or slow
    /// and not yet confirmed.
    size_t inFlight() const { return signalled_.size() + unconfirmed_.size() + slow_.size(); }

private:
    void admitWhileRoom();
    void roundTripSoon();
    void onSlow(const std::string& unit);

    size_t window_;
    std::chrono::milliseconds slowAfter_;
    common::EventLoop* loop_;
    Admit admit_;
    RoundTrip roundTrip_;
    std::deque<std::string> queue_;
    /// Signalled, not ended: the handle of its slow timer.
    std::map<std::string, uint64_t> signalled_;
    /// Ended: the number of round trips sent before it ended; a later one confirms it.
    std::map<std::string, uint64_t> unconfirmed_;
    /// Outlived slowAfter, not ended: as unconfirmed_, it leaves the window
    /// with the first round trip sent after.
    std::map<std::string, uint64_t> slow_;
    uint64_t tripsSent_ = 0;
    bool tripInFlight_ = false;
    bool admitting_ = false;
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
};

}  // namespace taskscope::manager
