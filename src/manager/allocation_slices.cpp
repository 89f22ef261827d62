#include "manager/allocation_slices.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/error_names.hpp"
#include "scope/resources.hpp"

namespace taskscope::manager {

namespace {

using common::Result;

/// Every start and every change answered, errors and all, into one
/// completion (the slices above one task).
struct Join {
    size_t left = 1;  // the caller's own hold, dropped once all are sent
    std::optional<common::Error> error;
    AllocationSlices::Completion done;

    static std::function<void(Result<void>)> part(const std::shared_ptr<Join>& join) {
        ++join->left;
        return [join](Result<void> r) {
            if (!r && !join->error) join->error = r.error();
            join->drop();
        };
    }
    void drop() {
        if (--left) return;
        if (error) return done(*error);
        done({});
    }
};

}  // namespace

AllocationSlices::AllocationSlices(scope::SliceLayout layout, scope::SystemdClient& systemd)
    : layout_(std::move(layout)), systemd_(systemd) {}

uint64_t AllocationSlices::taskWeight(const spec::Resources& resources) {
    return resources.cpuShares ? scope::cpuWeightFromShares(*resources.cpuShares) : scope::kCpuWeightDefault;
}

Result<scope::TaskSlices> AllocationSlices::place(const std::string& allocId, bool reserved) const {
    return scope::taskSlices(layout_, allocId, reserved ? scope::Pool::Reserved : scope::Pool::Shared, 0);
}

bool AllocationSlices::weighed(const std::string& slice) const {
    return slice != scope::poolSlice(layout_, scope::Pool::Shared) &&
           slice != scope::poolSlice(layout_, scope::Pool::Reserved);
}

void AllocationSlices::enter(const std::string& unit, const scope::TaskSlices& slices, uint64_t weight,
                             std::function<void()> issued, Completion made) {
    auto& alloc = slices_[slices.allocation];
    if (alloc.removing) {
        // Its stop was sent first: systemd would run the two jobs in that
        // order. The slice is made again once the stop is done.
        alloc.afterRemoval.push_back(unit);
        deferred_[unit] = Deferred{slices, weight, std::move(issued), std::move(made)};
        return;
    }
    enterNow(unit, slices.chain, weight, issued, std::move(made));
}

void AllocationSlices::enterNow(const std::string& unit, const std::vector<std::string>& chain, uint64_t weight,
                                const std::function<void()>& issued, Completion made) {
    for (size_t i = 0; i < chain.size(); ++i) slices_[chain[i]].parent = i ? chain[i - 1] : layout_.root;
    members_[unit] = Member{chain, weight, true};
    ++slices_[chain.back()].members;
    // Started now: every slice without a running task below (made for the
    // first time, or made again: an operator may have stopped it).
    std::set<std::string> creating;
    for (const auto& s : chain)
        if (slices_[s].sum == 0) creating.insert(s);
    addToSums(chain, weight, true, creating);
    auto join = std::make_shared<Join>();
    join->done = std::move(made);
    for (const auto& s : chain) {
        auto& slice = slices_[s];
        if (creating.count(s))
            startSlice(s, slice.parent, Join::part(join));
        else if (slice.starting)
            slice.pending.push_back(Join::part(join));
    }
    issued();
    join->drop();
}

void AllocationSlices::addToSums(const std::vector<std::string>& chain, uint64_t weight, bool add,
                                 const std::set<std::string>& creating) {
    for (const auto& s : chain) {
        auto& slice = slices_[s];
        slice.sum = add ? slice.sum + weight : slice.sum - std::min(weight, slice.sum);
        if (!weighed(s)) continue;
        for (const auto& change : scales_[slice.parent].set(s, slice.sum))
            if (!creating.count(change.child)) setWeight(change.child, change.weight);
    }
}

scope::UnitProperties AllocationSlices::propertiesOf(const std::string& slice, const std::string& parent) const {
    scope::UnitProperties p;
    // The allocation's CPU, memory and tasks in one read of its slice.
    p.emplace_back("CPUAccounting", sdbus::Variant(true));
    p.emplace_back("MemoryAccounting", sdbus::Variant(true));
    p.emplace_back("TasksAccounting", sdbus::Variant(true));
    if (weighed(slice)) {
        auto it = scales_.find(parent);
        const uint64_t w = it == scales_.end() ? scope::kCpuWeightDefault : it->second.weightOf(slice);
        p.emplace_back("CPUWeight", sdbus::Variant(w));
    }
    if (slice == scope::poolSlice(layout_, scope::Pool::Shared) && sharedCpus_ && !sharedCpus_->empty())
        p.emplace_back("AllowedCPUs", sdbus::Variant(scope::cpuMask(*sharedCpus_)));
    return p;
}

void AllocationSlices::startSlice(const std::string& name, const std::string& parent, Completion done) {
    auto& slice = slices_[name];
    slice.starting = true;
    slice.pending.push_back(std::move(done));
    const auto cgroupProps = propertiesOf(name, parent);
    auto props = cgroupProps;
    props.emplace_back("Description", sdbus::Variant("taskscope slice " + name));
    auto finish = [this, name, alive = std::weak_ptr<int>(lifetime_)](Result<void> r) {
        if (alive.expired()) return;
        if (!r) spdlog::warn("Failed to start slice {}: {}", name, r.error().message);
        auto it = slices_.find(name);
        if (it == slices_.end()) return;
        if (r && name == scope::poolSlice(layout_, scope::Pool::Shared)) shareMade_ = true;
        it->second.starting = false;
        auto waiting = std::move(it->second.pending);
        for (auto& w : waiting) w(r);
    };
    systemd_.startSliceAsync(name, props, [this, name, cgroupProps, finish,
                                           alive = std::weak_ptr<int>(lifetime_)](Result<void> r) mutable {
        if (alive.expired()) return;
        // Made by an earlier manager (or by hand): ours from now on, with
        // our properties (only those a unit that is not transient takes too).
        if (!r && r.error().name == common::errors::kUnitExists)
            return systemd_.setUnitPropertiesAsync(name, cgroupProps, finish);
        finish(std::move(r));
    });
}

void AllocationSlices::setWeight(const std::string& slice, uint64_t weight) {
    scope::UnitProperties p;
    p.emplace_back("CPUWeight", sdbus::Variant(weight));
    systemd_.setUnitPropertiesAsync(slice, p, [slice, weight](Result<void> r) {
        // The ratios are off until the next change of the slice's siblings;
        // nothing of any task is lost.
        if (!r) spdlog::warn("Failed to set CPUWeight={} on {}: {}", weight, slice, r.error().message);
    });
}

void AllocationSlices::stopped(const std::string& unit) {
    auto it = members_.find(unit);
    if (it == members_.end() || !it->second.running) return;
    it->second.running = false;
    addToSums(it->second.chain, it->second.weight, false, {});
}

void AllocationSlices::reweigh(const std::string& unit, uint64_t weight) {
    auto it = members_.find(unit);
    if (it == members_.end() || it->second.weight == weight) return;
    auto& m = it->second;
    if (m.running) {
        // Every slice of the chain has this task's weight in it: none goes
        // to 0 between the two, so nothing is made or dropped.
        for (const auto& s : m.chain) slices_[s].sum += weight;
        addToSums(m.chain, m.weight, false, {});
    }
    m.weight = weight;
}

void AllocationSlices::leave(const std::string& unit) {
    if (auto d = deferred_.find(unit); d != deferred_.end()) {
        // Its start ended while it waited for a removal: it never entered.
        auto& waiting = slices_[d->second.slices.allocation].afterRemoval;
        std::erase(waiting, unit);
        deferred_.erase(d);
        return;
    }
    auto it = members_.find(unit);
    if (it == members_.end()) return;
    stopped(unit);
    const auto alloc = it->second.chain.back();
    members_.erase(it);
    auto& slice = slices_[alloc];
    if (slice.members) --slice.members;
    if (slice.members == 0 && !slice.removing) removeAllocation(alloc);
}

void AllocationSlices::removeAllocation(const std::string& name) {
    slices_[name].removing = true;
    systemd_.stopUnitAsync(name, [this, name, alive = std::weak_ptr<int>(lifetime_)](Result<void> r) {
        if (alive.expired()) return;
        // NoSuchUnit: already gone (stopped by hand, or never made). Any
        // other failure leaves it to the dangling reconciler.
        if (!r && r.error().name != common::errors::kNoSuchUnit)
            spdlog::warn("Failed to remove the slice {} of a forgotten allocation: {}", name, r.error().message);
        auto& slice = slices_[name];
        slice.removing = false;
        auto waiting = std::move(slice.afterRemoval);
        if (waiting.empty() && slice.members == 0) {
            slices_.erase(name);
            scales_.erase(name);
            return;
        }
        // A start came meanwhile: it wins, and makes the slice again.
        for (const auto& unit : waiting) {
            auto d = deferred_.find(unit);
            if (d == deferred_.end()) continue;
            auto entry = std::move(d->second);
            deferred_.erase(d);
            enterNow(unit, entry.slices.chain, entry.weight, entry.issued, std::move(entry.made));
        }
    });
}

void AllocationSlices::restore(const std::string& unit, const std::string& slice, uint64_t weight, bool running) {
    // The chain from the slice's name (systemd's own rule: every '-' a
    // level), below the configured slice: a layout with another fan-out
    // than this manager's still finds the slices its tasks are in.
    auto rootLevels = scope::sliceAncestors(layout_.root);
    rootLevels.push_back(layout_.root);
    std::vector<std::string> chain;
    for (auto& a : scope::sliceAncestors(slice))
        if (std::find(rootLevels.begin(), rootLevels.end(), a) == rootLevels.end()) chain.push_back(std::move(a));
    chain.push_back(slice);
    for (size_t i = 0; i < chain.size(); ++i) slices_[chain[i]].parent = i ? chain[i - 1] : layout_.root;
    if (chain.front() == scope::poolSlice(layout_, scope::Pool::Shared)) shareMade_ = true;
    ++slices_[slice].members;
    members_[unit] = Member{chain, weight, running};
    if (running)
        for (const auto& s : chain) slices_[s].sum += weight;
}

void AllocationSlices::reapplyWeights() {
    for (const auto& [name, slice] : slices_)
        if (weighed(name) && slice.sum) scales_[slice.parent].set(name, slice.sum);
    for (const auto& [name, slice] : slices_)
        if (weighed(name) && slice.sum) setWeight(name, scales_[slice.parent].weightOf(name));
}

void AllocationSlices::setSharedCpus(const std::set<unsigned>& cpus, Completion done) {
    sharedCpus_ = cpus;
    const auto share = scope::poolSlice(layout_, scope::Pool::Shared);
    auto it = slices_.find(share);
    // Not made yet: its start carries them.
    if (!shareMade_ && (it == slices_.end() || !it->second.starting)) return done({});
    scope::UnitProperties p;
    p.emplace_back("AllowedCPUs", sdbus::Variant(scope::cpuMask(cpus)));
    systemd_.setUnitPropertiesAsync(share, p, std::move(done));
}

std::string AllocationSlices::allocationOf(const std::string& unit) const {
    auto it = members_.find(unit);
    return it == members_.end() ? std::string() : it->second.chain.back();
}

size_t AllocationSlices::membersOf(const std::string& slice) const {
    auto it = slices_.find(slice);
    return it == slices_.end() ? 0 : it->second.members;
}

std::set<std::string> AllocationSlices::allocationSlices() const {
    std::set<std::string> out;
    for (const auto& [name, slice] : slices_)
        if (slice.members || slice.removing) out.insert(name);
    return out;
}

}  // namespace taskscope::manager
