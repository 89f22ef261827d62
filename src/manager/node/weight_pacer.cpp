// The weight pacer (weight_pacer.hpp): a weight waits for the starts under
// way and is paced per slice and per node, and a removal of an allocation's
// slice shares the lane; what systemd holds is remembered, so that only
// the weights that differ are sent.
#include "manager/node/weight_pacer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "scope/resources.hpp"

namespace taskscope::manager {

using common::Result;

WeightPacer::WeightPacer(scope::SystemdClient& systemd, common::EventLoop* loop,
                         std::chrono::milliseconds weightInterval, std::chrono::milliseconds nodeWeightInterval)
    : systemd_(systemd), loop_(loop), weightInterval_(weightInterval), nodeWeightInterval_(nodeWeightInterval) {}

WeightPacer::~WeightPacer() {
    if (flushTimer_ && loop_) loop_->cancelTimer(flushTimer_);
    if (paceTimer_ && loop_) loop_->cancelTimer(paceTimer_);
}

void WeightPacer::setWeight(const std::string& slice, uint64_t weight) {
    // systemd holds it already (a short task's slices come back to the
    // weight they had): nothing to ask.
    if (held_[slice].applied == weight) {
        unsent_.erase(slice);
        return;
    }
    unsent_[slice] = weight;
    flushSoon();
}

void WeightPacer::carried(const std::string& slice, uint64_t weight) {
    held_[slice].applied = weight;
    unsent_.erase(slice);
}

void WeightPacer::unknown(const std::string& slice) {
    held_[slice].applied = 0;
}

void WeightPacer::held(const std::string& slice, uint64_t weight) {
    if (auto& h = held_[slice]; !h.applied) h.applied = weight;
}

std::map<std::string, uint64_t> WeightPacer::heldWeights() const {
    std::map<std::string, uint64_t> out;
    for (const auto& [name, h] : held_)
        if (h.applied) out[name] = h.applied;
    return out;
}

void WeightPacer::forget(const std::string& slice) {
    held_.erase(slice);
    unsent_.erase(slice);
}

void WeightPacer::remove(const std::vector<std::string>& family) {
    if (family.empty()) return;
    for (const auto& s : family) unsent_.erase(s);
    removals_.push_back(family.front());
    kickLane();
}

bool WeightPacer::cancelRemoval(const std::string& slice) {
    auto q = std::find(removals_.begin(), removals_.end(), slice);
    if (q == removals_.end()) return false;
    removals_.erase(q);
    return true;
}

void WeightPacer::flushSoon() {
    if (unsent_.empty()) return;
    if (startsUnanswered_ == 0) return flush();
    if (loop_ && !flushTimer_)
        flushTimer_ = loop_->addTimer(common::EventLoop::Clock::now() + kFlushDelay, [this] {
            flushTimer_ = 0;
            flush();
        });
}

void WeightPacer::flush() {
    if (flushTimer_ && loop_) loop_->cancelTimer(flushTimer_);
    flushTimer_ = 0;
    flushDue_ = true;
    kickLane();
}

void WeightPacer::kickLane() {
    const auto alive = std::weak_ptr<int>(lifetime_);
    if (!weightBusy_ && flushDue_ && !sendNextWeight()) flushDue_ = false;
    // Removals: a few at a time, each slot given again once its job is
    // done.
    while (removalsInFlight_ < kRemovalsInFlight && !removals_.empty()) {
        const auto name = removals_.front();
        removals_.pop_front();
        ++removalsInFlight_;
        systemd_.stopUnitAsync(name, [this, name, alive](Result<void> r) {
            if (alive.expired()) return;
            --removalsInFlight_;
            if (removed_) removed_(name, std::move(r));
            kickLane();
        });
    }
}

bool WeightPacer::sendNextWeight() {
    const auto alive = std::weak_ptr<int>(lifetime_);
    const auto now = loop_ ? common::EventLoop::Clock::now() : common::EventLoop::Clock::time_point{};
    std::optional<common::EventLoop::Clock::time_point> nextDue;
    // The running tasks' shares: one at a time (the caller's), and
    // node-wide at most one per nodeWeightInterval_: the slice whose
    // share systemd holds is furthest off its sum goes first (so a large
    // allocation's bucket is not kept behind the small drifts of a fill).
    const bool nodePaced = loop_ && nodeWeightInterval_.count() > 0 &&
                           lastWeightSent_ != common::EventLoop::Clock::time_point{} &&
                           now < lastWeightSent_ + nodeWeightInterval_;
    auto best = unsent_.end();
    double bestDrift = -1;
    for (auto next = unsent_.begin(); next != unsent_.end();) {
        const auto [slice, weight] = *next;
        auto own = held_.find(slice);
        if (own == held_.end() || own->second.applied == weight) {
            next = unsent_.erase(next);
            continue;
        }
        // (Without a loop nothing is ever stamped: no pacing.)
        if (own->second.weightSent != common::EventLoop::Clock::time_point{}) {
            const auto due = own->second.weightSent + weightInterval_;
            if (now < due) {
                // Sent too recently: it waits, and goes as it is then.
                if (!nextDue || due < *nextDue) nextDue = due;
                ++next;
                continue;
            }
        }
        const auto applied = own->second.applied;
        const double drift = applied == 0 ? std::numeric_limits<double>::infinity()
                                          : std::abs(double(weight) - double(applied)) / double(applied);
        if (drift > bestDrift) {
            best = next;
            bestDrift = drift;
        }
        ++next;
    }
    if (best != unsent_.end() && nodePaced) {
        // Another slice's weight went too recently: this one waits its turn.
        const auto due = lastWeightSent_ + nodeWeightInterval_;
        if (!nextDue || due < *nextDue) nextDue = due;
    } else if (best != unsent_.end()) {
        const auto [slice, weight] = *best;
        auto& own = held_[slice];
        unsent_.erase(best);
        own.applied = weight;
        own.weightSent = now;
        lastWeightSent_ = now;
        weightBusy_ = true;
        systemd_.setUnitPropertiesAsync(
            slice, scope::sliceProperties({.cpuWeight = weight, .allowedCpus = std::nullopt}),
            [this, slice, weight, alive](Result<void> r) {
                if (alive.expired()) return;
                if (!r) {
                    // The ratios are off until the next change of the slice's
                    // siblings; nothing of any task is lost.
                    notDone_(false, "set CPUWeight=" + std::to_string(weight) + " on " + slice, r.error());
                    if (auto it = held_.find(slice); it != held_.end() && it->second.applied == weight)
                        it->second.applied = 0;
                }
                weightBusy_ = false;
                kickLane();
            });
        return true;
    }
    if (nextDue && (!paceTimer_ || *nextDue < paceDue_)) {
        if (paceTimer_) loop_->cancelTimer(paceTimer_);
        paceDue_ = *nextDue;
        paceTimer_ = loop_->addTimer(paceDue_, [this] {
            paceTimer_ = 0;
            flushSoon();
        });
    }
    return false;
}

void WeightPacer::scopeAnswered() {
    if (startsUnanswered_) --startsUnanswered_;
    if (startsUnanswered_ == 0) flushSoon();
}

}  // namespace taskscope::manager
