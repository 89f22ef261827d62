// The slice ledger (slice_ledger.hpp): places, sums and the decisions they
// make, with no call to anyone.
#include "manager/node/slice_ledger.hpp"

#include <algorithm>

#include "scope/cgroup_path.hpp"

namespace taskscope::manager {

namespace {

using common::Result;

/// The last overflow suffix a name leaves room for ("-o" and 5 digits):
/// past it, the last overflow slice takes every further task.
constexpr unsigned kLastOverflow = 99999;

}  // namespace

SliceLedger::SliceLedger(scope::SliceLayout layout) : layout_(std::move(layout)) {}

SliceLedger::TaskCpu SliceLedger::taskCpu(const spec::Resources& resources) {
    TaskCpu cpu;
    if (resources.cpuShares) {
        cpu.shares = std::clamp(*resources.cpuShares, scope::kCpuSharesMin, scope::kCpuSharesMax);
        cpu.weight = scope::cpuWeightFromShares(*resources.cpuShares);
    } else {
        cpu.shares = scope::sharesOfDefaultWeight();
    }
    cpu.keepsWeight = resources.cpuQuotaPercent.has_value();
    return cpu;
}

Result<scope::TaskSlices> SliceLedger::place(const std::string& allocId, bool reserved) const {
    return scope::taskSlices(layout_, allocId, reserved ? scope::Pool::Reserved : scope::Pool::Shared, 0);
}

Result<scope::TaskSlices> SliceLedger::claim(const std::string& unit, const std::string& allocId, bool reserved) {
    release(unit);
    const auto pool = reserved ? scope::Pool::Reserved : scope::Pool::Shared;
    // The first slice with room, the allocation's own first: a slice never
    // holds more than the cap of scopes directly (systemd's cost per start
    // grows with the members of every slice above the unit), so a large
    // allocation grows sideways into overflow slices of `cap` each.
    for (unsigned n = 0;; ++n) {
        auto placed = scope::taskSlices(layout_, allocId, pool, n);
        if (!placed) return placed;
        auto it = slices_.find(placed->parent());
        const size_t held = it == slices_.end() ? 0 : it->second.direct;
        if (held < layout_.cap || n == kLastOverflow) {
            ++slices_[placed->parent()].direct;
            claims_[unit] = placed->parent();
            return placed;
        }
    }
}

void SliceLedger::drop(std::map<std::string, Slice>::iterator it) {
    dropped_.push_back(it->first);
    slices_.erase(it);
}

std::vector<std::string> SliceLedger::takeDropped() {
    return std::exchange(dropped_, {});
}

void SliceLedger::release(const std::string& unit) {
    auto c = claims_.find(unit);
    if (c == claims_.end()) return;
    auto it = slices_.find(c->second);
    claims_.erase(c);
    if (it == slices_.end()) return;
    auto& slice = it->second;
    if (slice.direct) --slice.direct;
    // A place never entered (its start failed early) leaves no trace.
    if (!slice.direct && !slice.members && !slice.sum && !slice.removing && !slice.starting) drop(it);
}

bool SliceLedger::weighed(const std::string& slice) const {
    return slice != scope::poolSlice(layout_, scope::Pool::Shared) &&
           slice != scope::poolSlice(layout_, scope::Pool::Reserved);
}

bool SliceLedger::removing(const std::string& allocation) const {
    auto it = slices_.find(allocation);
    return it != slices_.end() && it->second.removing;
}

void SliceLedger::removalCancelled(const std::string& allocation) {
    slices_[allocation].removing = false;
}

void SliceLedger::waitForRemoval(const std::string& unit, const std::string& allocation) {
    slices_[allocation].afterRemoval.push_back(unit);
}

SliceLedger::Entry SliceLedger::enter(const std::string& unit, const scope::TaskSlices& slices, const TaskCpu& cpu) {
    Entry entry;
    const auto& chain = slices.chain;
    for (size_t i = 0; i < chain.size(); ++i) slices_[chain[i]].parent = i ? chain[i - 1] : layout_.root;
    // Its claimed place becomes its own (a caller that claimed none, or
    // another, takes one now).
    if (auto c = claims_.find(unit); c != claims_.end() && c->second == chain.back()) {
        claims_.erase(c);
    } else {
        release(unit);
        ++slices_[chain.back()].direct;
    }
    if (chain.back() != slices.allocation) slices_[chain.back()].overflow = true;
    // Alone, its weight is its slice's; beside a running task of its
    // allocation, every weight goes on its scope, the others' before its
    // own start is sent.
    const bool beside = slices_[slices.allocation].running > 0;
    if (beside) entry.toScopes = weightsToScopes(slices.allocation);
    const auto& member = members_[unit] = Member{chain, slices.allocation, cpu, true, beside || cpu.keepsWeight};
    ++slices_[slices.allocation].members;
    slices_[slices.allocation].units.insert(unit);
    countRunning(member, true);
    // Made now (their start or properties carry their weight): every slice
    // without a running task below that is not known to exist, and the
    // allocation's own slices whenever they get a running task again (an
    // operator may have stopped them, and a task never runs in a slice
    // without its weight). Share and buckets, once made, stay: their
    // weight follows in addToSums, one call, not a start and a property
    // change.
    std::set<std::string> creating;
    for (const auto& s : chain) {
        const auto& slice = slices_[s];
        const bool allocations = s == slices.allocation || slice.overflow;
        if (slice.sum == 0 && (allocations || !slice.made)) creating.insert(s);
    }
    entry.weights = addToSums(chain, cpu, true, creating);
    for (const auto& s : chain) {
        auto& slice = slices_[s];
        auto make = Make::None;
        if (creating.count(s) && !slice.starting && !slice.made)
            make = Make::Carry;
        else if (creating.count(s) && !slice.starting)
            make = Make::Refresh;
        else if (creating.count(s))
            make = Make::Restart;
        else if (slice.starting)
            make = Make::Wait;
        if (make == Make::Carry || make == Make::Refresh || make == Make::Restart) slice.starting = true;
        entry.chain.emplace_back(s, make);
    }
    return entry;
}

void SliceLedger::countRunning(const Member& m, bool in) {
    auto& alloc = slices_[m.allocation];
    if (in) {
        ++alloc.running;
        if (!m.onScope) ++alloc.offScope;
        return;
    }
    if (alloc.running) --alloc.running;
    if (!m.onScope && alloc.offScope) --alloc.offScope;
}

std::vector<std::pair<std::string, std::optional<uint64_t>>> SliceLedger::weightsToScopes(
    const std::string& allocation) {
    std::vector<std::pair<std::string, std::optional<uint64_t>>> out;
    auto& alloc = slices_[allocation];
    if (!alloc.offScope) return out;
    alloc.offScope = 0;
    for (const auto& unit : alloc.units) {
        auto it = members_.find(unit);
        if (it == members_.end() || !it->second.running || it->second.onScope) continue;
        it->second.onScope = true;
        // A task that asked no shares weighs the kernel's default, on its
        // scope as anywhere: nothing to send.
        out.emplace_back(unit, it->second.cpu.weight);
    }
    return out;
}

SliceLedger::WeightChanges SliceLedger::addToSums(const std::vector<std::string>& chain, const TaskCpu& cpu, bool add,
                                                  const std::set<std::string>& creating) {
    WeightChanges out;
    const auto weight = cpu.scopeWeight();
    for (const auto& s : chain) {
        auto& slice = slices_[s];
        slice.sum = add ? slice.sum + cpu.shares : slice.sum - std::min(cpu.shares, slice.sum);
        slice.scopeWeights =
            add ? slice.scopeWeights + weight : slice.scopeWeights - std::min(weight, slice.scopeWeights);
        // An overflow slice sits beside its allocation's scopes: it weighs
        // its tasks' scope weights summed, in their units, unscaled (a full
        // slice of heavy tasks is held to 10000, as one scope asking for
        // more would be).
        if (slice.overflow) {
            if (slice.sum && !creating.count(s)) out.emplace_back(s, scope::unscaledWeight(slice.scopeWeights));
            continue;
        }
        if (!weighed(s)) continue;
        // A slice with no running task below needs no weight until it has
        // one again (then it is set here, or carried by its start).
        for (const auto& change : scales_[slice.parent].set(s, slice.sum))
            if (!creating.count(change.child) && slices_[change.child].sum)
                out.emplace_back(change.child, change.weight);
    }
    return out;
}

std::optional<uint64_t> SliceLedger::weightOf(const std::string& name) const {
    auto own = slices_.find(name);
    if (own != slices_.end() && own->second.overflow) return scope::unscaledWeight(own->second.scopeWeights);
    if (!weighed(name)) return std::nullopt;
    const auto parent = own == slices_.end() ? layout_.root : own->second.parent;
    auto it = scales_.find(parent);
    return it == scales_.end() ? scope::kCpuWeightDefault : it->second.weightOf(name);
}

std::optional<uint64_t> SliceLedger::weightDue(const std::string& name) const {
    auto it = slices_.find(name);
    if (it == slices_.end() || !it->second.sum) return std::nullopt;
    return weightOf(name);
}

scope::UnitProperties SliceLedger::propertiesOf(const std::string& slice) const {
    scope::UnitProperties p;
    // The allocation's CPU, memory and tasks in one read of its slice.
    scope::addAccountingProperties(p);
    scope::SliceResources r;
    r.cpuWeight = weightOf(slice);
    if (slice == shareSlice() && sharedCpus_ && !sharedCpus_->empty()) r.allowedCpus = *sharedCpus_;
    for (auto& property : scope::sliceProperties(r)) p.push_back(std::move(property));
    return p;
}

scope::UnitProperties SliceLedger::startPropertiesOf(const std::string& slice) const {
    auto p = propertiesOf(slice);
    p.emplace_back("Description", sdbus::Variant("taskscope slice " + slice));
    return p;
}

bool SliceLedger::settled(const std::string& name, bool made) {
    auto it = slices_.find(name);
    if (it == slices_.end()) return false;
    it->second.starting = false;
    if (made) it->second.made = true;
    return true;
}

SliceLedger::WeightChanges SliceLedger::stopped(const std::string& unit) {
    auto it = members_.find(unit);
    if (it == members_.end() || !it->second.running) return {};
    countRunning(it->second, false);
    it->second.running = false;
    return addToSums(it->second.chain, it->second.cpu, false, {});
}

SliceLedger::WeightChanges SliceLedger::reweigh(const std::string& unit, const TaskCpu& cpu) {
    WeightChanges out;
    auto it = members_.find(unit);
    if (it == members_.end() || it->second.cpu == cpu) return out;
    auto& m = it->second;
    if (m.running && m.cpu.shares != cpu.shares) {
        // Every slice of the chain has this task's shares in it: none goes
        // to 0 between the two, so nothing is made or dropped.
        for (const auto& s : m.chain) {
            slices_[s].sum += cpu.shares;
            slices_[s].scopeWeights += cpu.scopeWeight();
        }
        out = addToSums(m.chain, m.cpu, false, {});
    }
    // A quota given now: its scope has the cpu controller, and its weight
    // (the caller sends it with the quota).
    if (cpu.keepsWeight && !m.onScope) {
        if (m.running) countRunning(m, false);
        m.onScope = true;
        if (m.running) countRunning(m, true);
    }
    m.cpu = cpu;
    return out;
}

bool SliceLedger::weightOnScope(const std::string& unit) const {
    auto it = members_.find(unit);
    return it == members_.end() || it->second.onScope;
}

void SliceLedger::abandon(const std::string& unit, const std::string& allocation) {
    std::erase(slices_[allocation].afterRemoval, unit);
    release(unit);
}

SliceLedger::Leaving SliceLedger::leave(const std::string& unit) {
    Leaving out;
    auto it = members_.find(unit);
    if (it == members_.end()) {
        release(unit);
        return out;
    }
    out.weights = stopped(unit);
    const auto container = it->second.chain.back();
    const auto alloc = it->second.allocation;
    members_.erase(it);
    if (auto& c = slices_[container]; c.direct) --c.direct;
    auto& slice = slices_[alloc];
    slice.units.erase(unit);
    if (slice.members) --slice.members;
    if (slice.members == 0 && !slice.removing) {
        slice.removing = true;
        // No weight for a slice on its way out, nor for those in it.
        out.removal.push_back(alloc);
        for (const auto& [name, s] : slices_)
            if (s.parent == alloc && name != alloc) out.removal.push_back(name);
    }
    return out;
}

SliceLedger::Removal SliceLedger::removed(const std::string& name) {
    Removal out;
    auto& slice = slices_[name];
    slice.removing = false;
    slice.made = false;
    out.unmade.push_back(name);
    for (auto& [child, c] : slices_)
        if (c.parent == name && c.overflow) {
            c.made = false;
            out.unmade.push_back(child);
        }
    auto waiting = std::move(slice.afterRemoval);
    slice.afterRemoval.clear();
    if (waiting.empty() && slice.members == 0) {
        // Its overflow slices went with it (systemd stops a slice's
        // children first). A place claimed meanwhile keeps its count.
        for (auto it = slices_.begin(); it != slices_.end();) {
            const bool gone = (it->first == name || (it->second.parent == name && it->second.overflow)) &&
                              it->second.direct == 0 && it->second.members == 0;
            auto next = std::next(it);
            if (gone) drop(it);
            it = next;
        }
        scales_.erase(name);
        return out;
    }
    // A start came meanwhile: it wins, and makes the slice again.
    out.reenter = std::move(waiting);
    return out;
}

void SliceLedger::restore(const std::string& unit, const std::string& slice, const std::string& allocation,
                          const TaskCpu& cpu, bool running, const std::string& cgroup, bool onScope) {
    // The chain from the slice's name (systemd's own rule: every '-' a
    // level), below the configured slice: a layout with another fan-out
    // than this manager's still finds the slices its tasks are in.
    auto rootLevels = scope::sliceAncestors(layout_.root);
    rootLevels.push_back(layout_.root);
    std::vector<std::string> chain;
    for (auto& a : scope::sliceAncestors(slice))
        if (std::find(rootLevels.begin(), rootLevels.end(), a) == rootLevels.end()) chain.push_back(std::move(a));
    chain.push_back(slice);
    // Each slice's cgroup is an ancestor of the scope's, named after it.
    std::optional<scope::CgroupPath> scopeCgroup;
    if (auto parsed = scope::CgroupPath::parse(cgroup)) scopeCgroup = *parsed;
    for (size_t i = 0; i < chain.size(); ++i) {
        auto& own = slices_[chain[i]];
        own.parent = i ? chain[i - 1] : layout_.root;
        own.made = true;  // its task's scope is in it
        if (own.cgroup.empty() && scopeCgroup)
            if (auto at = scopeCgroup->ancestorNamed(chain[i])) own.cgroup = at->str();
    }
    // A record written before overflow slices existed names only the slice.
    const auto& alloc = allocation.empty() ? slice : allocation;
    if (slice != alloc) slices_[slice].overflow = true;
    ++slices_[alloc].members;
    slices_[alloc].units.insert(unit);
    ++slices_[slice].direct;
    const auto& member = members_[unit] = Member{chain, alloc, cpu, running, onScope || cpu.keepsWeight};
    if (running) {
        countRunning(member, true);
        for (const auto& s : chain) {
            slices_[s].sum += cpu.shares;
            slices_[s].scopeWeights += cpu.scopeWeight();
        }
    }
}

std::map<std::string, std::string> SliceLedger::weighedSliceCgroups() const {
    std::map<std::string, std::string> out;
    for (const auto& [name, slice] : slices_)
        if (slice.sum && !slice.cgroup.empty() && weightOf(name)) out[name] = slice.cgroup;
    return out;
}

SliceLedger::WeightChanges SliceLedger::rescale(const std::map<std::string, uint64_t>& held) {
    // Each parent's children keep the scale systemd holds them at (implied
    // by its heaviest child's weight) while it fits: a restart sends no
    // weight systemd has already, and neither does an upgrade from a
    // manager whose band put the heaviest elsewhere (before stop 49,
    // (5000, 10000]); at 10,000 allocations that would have been 10,000
    // weight calls, paced over 40 minutes with the ratios mixed meanwhile.
    std::map<std::string, std::pair<uint64_t, uint64_t>> heaviest;  // by parent: sum, weight held
    for (const auto& [name, slice] : slices_) {
        auto h = held.find(name);
        if (!slice.overflow && weighed(name) && slice.sum && h != held.end() && h->second) {
            auto& top = heaviest[slice.parent];
            if (slice.sum > top.first) top = {slice.sum, h->second};
        }
    }
    for (const auto& [parent, h] : heaviest) scales_[parent].keepScaleOf(h.first, h.second);
    for (const auto& [name, slice] : slices_)
        if (!slice.overflow && weighed(name) && slice.sum) scales_[slice.parent].set(name, slice.sum);
    WeightChanges out;
    for (const auto& [name, slice] : slices_)
        if (slice.sum)
            if (auto w = weightOf(name)) out.emplace_back(name, *w);
    return out;
}

std::string SliceLedger::shareSlice() const {
    return scope::poolSlice(layout_, scope::Pool::Shared);
}

bool SliceLedger::setSharedCpus(const std::set<unsigned>& cpus) {
    sharedCpus_ = cpus;
    auto it = slices_.find(shareSlice());
    // Not made yet: its start carries them.
    return it != slices_.end() && (it->second.made || it->second.starting);
}

std::string SliceLedger::allocationOf(const std::string& unit) const {
    auto it = members_.find(unit);
    return it == members_.end() ? std::string() : it->second.allocation;
}

size_t SliceLedger::membersOf(const std::string& slice) const {
    auto it = slices_.find(slice);
    return it == slices_.end() ? 0 : it->second.members;
}

bool SliceLedger::held(const Slice& slice) {
    return !slice.overflow && (slice.members || slice.removing);
}

std::set<std::string> SliceLedger::allocationSlices() const {
    std::set<std::string> out;
    for (const auto& [name, slice] : slices_)
        if (held(slice)) out.insert(name);
    return out;
}

bool SliceLedger::holdsAllocationSlice(const std::string& slice) const {
    auto it = slices_.find(slice);
    return it != slices_.end() && held(it->second);
}

}  // namespace taskscope::manager
