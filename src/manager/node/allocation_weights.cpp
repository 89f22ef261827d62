// The CPU weights of the allocations' slices on their way to systemd
// (allocation_slices.hpp): a weight waits for the starts under way and is
// paced per slice and per node, and a removal of an allocation's slice
// shares the lane; after a restart, only the weights that differ from what
// the slices hold are sent again.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "manager/node/allocation_slices.hpp"

namespace taskscope::manager {

using common::Result;

void AllocationSlices::setWeight(const std::string& slice, uint64_t weight) {
    // systemd holds it already (a short task's slices come back to the
    // weight they had): nothing to ask.
    if (slices_[slice].applied == weight) {
        unsent_.erase(slice);
        return;
    }
    unsent_[slice] = weight;
    flushSoon();
}

void AllocationSlices::flushSoon() {
    if (unsent_.empty()) return;
    if (startsUnanswered_ == 0) return flush();
    if (loop_ && !flushTimer_)
        flushTimer_ = loop_->addTimer(common::EventLoop::Clock::now() + kFlushDelay, [this] {
            flushTimer_ = 0;
            flush();
        });
}

void AllocationSlices::flush() {
    if (flushTimer_ && loop_) loop_->cancelTimer(flushTimer_);
    flushTimer_ = 0;
    flushDue_ = true;
    kickLane();
}

void AllocationSlices::kickLane() {
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
            removed(name, std::move(r));
            kickLane();
        });
    }
}

bool AllocationSlices::sendNextWeight() {
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
        auto own = slices_.find(slice);
        if (own == slices_.end() || own->second.applied == weight) {
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
        auto& own = slices_[slice];
        unsent_.erase(best);
        own.applied = weight;
        own.weightSent = now;
        lastWeightSent_ = now;
        scope::UnitProperties p;
        p.emplace_back("CPUWeight", sdbus::Variant(weight));
        weightBusy_ = true;
        systemd_.setUnitPropertiesAsync(slice, p, [this, slice, weight, alive](Result<void> r) {
            if (alive.expired()) return;
            if (!r) {
                // The ratios are off until the next change of the slice's
                // siblings; nothing of any task is lost.
                spdlog::warn("Failed to set CPUWeight={} on {}: {}", weight, slice, r.error().message);
                if (auto it = slices_.find(slice); it != slices_.end() && it->second.applied == weight)
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

void AllocationSlices::scopeAnswered() {
    if (startsUnanswered_) --startsUnanswered_;
    if (startsUnanswered_ == 0) flushSoon();
}

std::map<std::string, std::string> AllocationSlices::weighedSliceCgroups() const {
    std::map<std::string, std::string> out;
    for (const auto& [name, slice] : slices_)
        if (slice.sum && !slice.cgroup.empty() && weightOf(name)) out[name] = slice.cgroup;
    return out;
}

void AllocationSlices::heldWeights(const std::map<std::string, uint64_t>& held) {
    for (const auto& [name, weight] : held)
        if (auto it = slices_.find(name); it != slices_.end() && !it->second.applied) it->second.applied = weight;
}

void AllocationSlices::reapplyWeights() {
    // Each parent's children keep the scale systemd holds them at (implied
    // by its heaviest child's weight) while it fits: a restart sends no
    // weight systemd has already, and neither does an upgrade from a
    // manager whose band put the heaviest elsewhere (before stop 49,
    // (5000, 10000]); at 10,000 allocations that would have been 10,000
    // weight calls, paced over 40 minutes with the ratios mixed meanwhile.
    std::map<std::string, std::pair<uint64_t, uint64_t>> heaviest;  // by parent: sum, weight held
    for (const auto& [name, slice] : slices_)
        if (!slice.overflow && weighed(name) && slice.sum && slice.applied) {
            auto& h = heaviest[slice.parent];
            if (slice.sum > h.first) h = {slice.sum, slice.applied};
        }
    for (const auto& [parent, h] : heaviest)
        scales_[parent].keepScaleOf(h.first, h.second);
    for (const auto& [name, slice] : slices_)
        if (!slice.overflow && weighed(name) && slice.sum) scales_[slice.parent].set(name, slice.sum);
    for (const auto& [name, slice] : slices_)
        if (slice.sum)
            if (auto w = weightOf(name)) setWeight(name, *w);
}

}  // namespace taskscope::manager
