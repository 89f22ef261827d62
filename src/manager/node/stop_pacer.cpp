// The window of stops in flight and its queue (stop_pacer.hpp): admitted
// as systemd's round trips confirm the scopes it collected.
#include "manager/node/stop_pacer.hpp"

#include <algorithm>

namespace taskscope::manager {

StopPacer::StopPacer(size_t window, std::chrono::milliseconds slowAfter, common::EventLoop* loop, Admit admit,
                     RoundTrip roundTrip)
    : window_(window),
      slowAfter_(slowAfter),
      loop_(loop),
      admit_(std::move(admit)),
      roundTrip_(std::move(roundTrip)) {}

StopPacer::~StopPacer() {
    if (loop_)
        for (const auto& [unit, timer] : signalled_)
            if (timer) loop_->cancelTimer(timer);
}

void StopPacer::request(const std::string& unit, bool first) {
    // Admitted already (a second stop of a task under way): its signal
    // again, at once; it holds its place in the window as it is.
    if (window_ == 0 || signalled_.count(unit) || unconfirmed_.count(unit) || slow_.count(unit)) return admit_(unit);
    if (auto it = std::find(queue_.begin(), queue_.end(), unit); it != queue_.end()) {
        if (!first) return;
        queue_.erase(it);
    }
    if (first)
        queue_.push_front(unit);
    else
        queue_.push_back(unit);
    admitWhileRoom();
}

void StopPacer::ended(const std::string& unit) {
    if (auto it = std::find(queue_.begin(), queue_.end(), unit); it != queue_.end()) {
        queue_.erase(it);
        return;
    }
    if (slow_.erase(unit)) {
        // Slow and not confirmed yet: its end now owes a round trip as any.
        unconfirmed_[unit] = tripsSent_;
        return roundTripSoon();
    }
    auto s = signalled_.find(unit);
    if (s == signalled_.end()) return;  // never paced, or slow and let go: it holds nothing
    if (s->second && loop_) loop_->cancelTimer(s->second);
    signalled_.erase(s);
    unconfirmed_[unit] = tripsSent_;
    roundTripSoon();
}

bool StopPacer::queued(const std::string& unit) const {
    return std::find(queue_.begin(), queue_.end(), unit) != queue_.end();
}

void StopPacer::admitWhileRoom() {
    // An admission may end its task at once (it had ended unseen): that
    // frees nothing until the next round trip, so no recursion is needed.
    if (admitting_) return;
    admitting_ = true;
    while (!queue_.empty() && inFlight() < window_) {
        const auto unit = queue_.front();
        queue_.pop_front();
        uint64_t timer = 0;
        if (loop_)
            timer = loop_->addTimer(common::EventLoop::Clock::now() + slowAfter_,
                                    [this, unit, alive = std::weak_ptr<int>(lifetime_)] {
                                        if (!alive.expired()) onSlow(unit);
                                    });
        signalled_[unit] = timer;
        admit_(unit);
    }
    admitting_ = false;
}

void StopPacer::roundTripSoon() {
    if (tripInFlight_ || (unconfirmed_.empty() && slow_.empty())) return;
    tripInFlight_ = true;
    const uint64_t trip = ++tripsSent_;
    roundTrip_([this, trip, alive = std::weak_ptr<int>(lifetime_)] {
        if (alive.expired()) return;
        tripInFlight_ = false;
        // Every task that ended before this trip was sent: systemd handled
        // its emptied cgroup before it read the call.
        std::erase_if(unconfirmed_, [trip](const auto& u) { return u.second < trip; });
        // Every task found slow before it: still running, with PID 1 keeping up.
        std::erase_if(slow_, [trip](const auto& u) { return u.second < trip; });
        admitWhileRoom();
        roundTripSoon();
    });
}

void StopPacer::onSlow(const std::string& unit) {
    auto s = signalled_.find(unit);
    if (s == signalled_.end()) return;
    signalled_.erase(s);
    slow_[unit] = tripsSent_;
    roundTripSoon();
}

}  // namespace taskscope::manager
