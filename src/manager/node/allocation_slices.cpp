// The allocations' slices as a ledger of places and sums: where a task goes,
// the slices made before its scope, the sums its weight moves, the
// allocation's slice removed with its last task. The weights' sending is
// allocation_weights.cpp's.
#include "manager/node/allocation_slices.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error_names.hpp"
#include "scope/cgroup_path.hpp"
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

/// The last overflow suffix a name leaves room for ("-o" and 5 digits):
/// past it, the last overflow slice takes every further task.
constexpr unsigned kLastOverflow = 99999;

}  // namespace

AllocationSlices::AllocationSlices(scope::SliceLayout layout, scope::SystemdClient& systemd, common::EventLoop* loop,
                                   std::chrono::milliseconds weightInterval,
                                   std::chrono::milliseconds nodeWeightInterval)
    : layout_(std::move(layout)),
      systemd_(systemd),
      loop_(loop),
      weightInterval_(weightInterval),
      nodeWeightInterval_(nodeWeightInterval) {}

AllocationSlices::~AllocationSlices() {
    if (flushTimer_ && loop_) loop_->cancelTimer(flushTimer_);
    if (paceTimer_ && loop_) loop_->cancelTimer(paceTimer_);
}

AllocationSlices::TaskCpu AllocationSlices::taskCpu(const spec::Resources& resources) {
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

Result<scope::TaskSlices> AllocationSlices::place(const std::string& allocId, bool reserved) const {
    return scope::taskSlices(layout_, allocId, reserved ? scope::Pool::Reserved : scope::Pool::Shared, 0);
}

Result<scope::TaskSlices> AllocationSlices::claim(const std::string& unit, const std::string& allocId, bool reserved) {
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

void AllocationSlices::release(const std::string& unit) {
    auto c = claims_.find(unit);
    if (c == claims_.end()) return;
    auto it = slices_.find(c->second);
    claims_.erase(c);
    if (it == slices_.end()) return;
    auto& slice = it->second;
    if (slice.direct) --slice.direct;
    // A place never entered (its start failed early) leaves no trace.
    if (!slice.direct && !slice.members && !slice.sum && !slice.removing && !slice.starting && slice.pending.empty())
        slices_.erase(it);
}

bool AllocationSlices::weighed(const std::string& slice) const {
    return slice != scope::poolSlice(layout_, scope::Pool::Shared) &&
           slice != scope::poolSlice(layout_, scope::Pool::Reserved);
}

void AllocationSlices::enter(const std::string& unit, const scope::TaskSlices& slices, const TaskCpu& cpu,
                             ScopeStart startScope, Completion scopeStarted, Completion made) {
    auto& alloc = slices_[slices.allocation];
    // Its removal still waits in the lane: not sent, so the slice stays,
    // as it is, for this task.
    if (auto q = std::find(removals_.begin(), removals_.end(), slices.allocation); alloc.removing && q != removals_.end()) {
        removals_.erase(q);
        alloc.removing = false;
    }
    if (alloc.removing) {
        // Its stop was sent first: systemd would run the two jobs in that
        // order. The slice is made again once the stop is done.
        alloc.afterRemoval.push_back(unit);
        deferred_[unit] = Deferred{slices, cpu, std::move(startScope), std::move(scopeStarted), std::move(made)};
        return;
    }
    enterNow(unit, slices, cpu, startScope, std::move(scopeStarted), std::move(made));
}

void AllocationSlices::enterNow(const std::string& unit, const scope::TaskSlices& slices, const TaskCpu& cpu,
                                const ScopeStart& startScope, Completion scopeStarted, Completion made) {
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
    if (beside) weightsToScopes(slices.allocation);
    const auto& member = members_[unit] = Member{chain, slices.allocation, cpu, true, beside || cpu.keepsWeight};
    ++slices_[slices.allocation].members;
    slices_[slices.allocation].units.insert(unit);
    countRunning(member, true);
    // The weights this start changes wait until its scope is answered.
    ++startsUnanswered_;
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
    addToSums(chain, cpu, true, creating);
    auto join = std::make_shared<Join>();
    join->done = std::move(made);
    std::vector<std::string> carried;
    for (const auto& s : chain) {
        auto& slice = slices_[s];
        if (creating.count(s) && !slice.starting && !slice.made) {
            // New: made in the scope's own call.
            slice.starting = true;
            slice.pending.push_back(Join::part(join));
            carried.push_back(s);
        } else if (creating.count(s) && !slice.starting) {
            refresh(s, Join::part(join));
        } else if (creating.count(s)) {
            startSlice(s, Join::part(join));
        } else if (slice.starting) {
            slice.pending.push_back(Join::part(join));
        }
    }
    startCarrying(unit, carried, startScope, std::move(scopeStarted));
    join->drop();
}

void AllocationSlices::countRunning(const Member& m, bool in) {
    auto& alloc = slices_[m.allocation];
    if (in) {
        ++alloc.running;
        if (!m.onScope) ++alloc.offScope;
        return;
    }
    if (alloc.running) --alloc.running;
    if (!m.onScope && alloc.offScope) --alloc.offScope;
}

void AllocationSlices::weightsToScopes(const std::string& allocation) {
    auto& alloc = slices_[allocation];
    if (!alloc.offScope) return;
    alloc.offScope = 0;
    for (const auto& unit : alloc.units) {
        auto it = members_.find(unit);
        if (it == members_.end() || !it->second.running || it->second.onScope) continue;
        auto& m = it->second;
        m.onScope = true;
        // A task that asked no shares weighs the kernel's default, on its
        // scope as anywhere: nothing to send.
        if (m.cpu.weight) {
            scope::UnitProperties p;
            p.emplace_back("CPUWeight", sdbus::Variant(*m.cpu.weight));
            systemd_.setUnitPropertiesAsync(unit, p, [unit, weight = *m.cpu.weight](Result<void> r) {
                // Its share among its allocation's tasks is the default's
                // until its next UpdateTask; nothing of the task is lost.
                if (!r) spdlog::warn("Failed to set CPUWeight={} on {}: {}", weight, unit, r.error().message);
            });
        }
        if (weightMoved_) weightMoved_(unit);
    }
}

void AllocationSlices::startCarrying(const std::string& unit, const std::vector<std::string>& carried,
                                     const ScopeStart& startScope, Completion scopeStarted) {
    scope::AuxUnits aux;
    for (const auto& s : carried) {
        aux.units.push_back({s, startPropertiesOf(s)});
        slices_[s].applied = weightOf(s).value_or(0);
        unsent_.erase(s);
    }
    // Made once systemd took the call: a task waiting for them needs no
    // more (its own scope's job waits for their jobs), so it does not wait
    // for this task's job.
    auto accepted = std::make_shared<bool>(false);
    if (!carried.empty())
        aux.accepted = [this, carried, accepted, alive = std::weak_ptr<int>(lifetime_)] {
            if (alive.expired()) return;
            *accepted = true;
            for (const auto& s : carried) settle(s, {});
        };
    startScope(aux, weightOnScope(unit),
               [this, unit, carried, accepted, startScope, scopeStarted = std::move(scopeStarted),
                alive = std::weak_ptr<int>(lifetime_)](Result<void> r) mutable {
        if (alive.expired()) return scopeStarted(std::move(r));
        if (carried.empty() || *accepted || r) {
            if (!*accepted && r)
                for (const auto& s : carried) settle(s, {});
            scopeAnswered();
            return scopeStarted(std::move(r));
        }
        // Refused: started on their own now, for the tasks waiting for them
        // (also when this task's scope was refused for its own reasons).
        for (const auto& s : carried) {
            slices_[s].applied = 0;
            sendStart(s);
        }
        // One of them existed (left by a crash, or made by hand): the scope
        // is asked again without them, after their starts.
        if (r.error().name == common::errors::kUnitExists) {
            spdlog::info("A slice to be made with a task's scope exists already ({}): made on its own",
                         r.error().message);
            // (With its weight if a task of its allocation started
            // meanwhile: that sent it to a scope that was not there yet.)
            return startScope({}, weightOnScope(unit),
                              [this, scopeStarted = std::move(scopeStarted), alive](Result<void> again) {
                                  if (!alive.expired()) scopeAnswered();
                                  scopeStarted(std::move(again));
                              });
        }
        scopeAnswered();
        scopeStarted(std::move(r));
    });
}

void AllocationSlices::addToSums(const std::vector<std::string>& chain, const TaskCpu& cpu, bool add,
                                 const std::set<std::string>& creating) {
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
            if (slice.sum && !creating.count(s)) setWeight(s, scope::unscaledWeight(slice.scopeWeights));
            continue;
        }
        if (!weighed(s)) continue;
        // A slice with no running task below needs no weight until it has
        // one again (then it is set here, or carried by its start).
        for (const auto& change : scales_[slice.parent].set(s, slice.sum))
            if (!creating.count(change.child) && slices_[change.child].sum) setWeight(change.child, change.weight);
    }
}

std::optional<uint64_t> AllocationSlices::weightOf(const std::string& name) const {
    auto own = slices_.find(name);
    if (own != slices_.end() && own->second.overflow) return scope::unscaledWeight(own->second.scopeWeights);
    if (!weighed(name)) return std::nullopt;
    const auto parent = own == slices_.end() ? layout_.root : own->second.parent;
    auto it = scales_.find(parent);
    return it == scales_.end() ? scope::kCpuWeightDefault : it->second.weightOf(name);
}

scope::UnitProperties AllocationSlices::propertiesOf(const std::string& slice) const {
    scope::UnitProperties p;
    // The allocation's CPU, memory and tasks in one read of its slice.
    scope::addAccountingProperties(p);
    if (auto w = weightOf(slice)) p.emplace_back("CPUWeight", sdbus::Variant(*w));
    if (slice == scope::poolSlice(layout_, scope::Pool::Shared) && sharedCpus_ && !sharedCpus_->empty())
        p.emplace_back("AllowedCPUs", sdbus::Variant(scope::cpuMask(*sharedCpus_)));
    return p;
}

scope::UnitProperties AllocationSlices::startPropertiesOf(const std::string& slice) const {
    auto p = propertiesOf(slice);
    p.emplace_back("Description", sdbus::Variant("taskscope slice " + slice));
    return p;
}

void AllocationSlices::startSlice(const std::string& name, Completion done) {
    auto& slice = slices_[name];
    slice.starting = true;
    slice.pending.push_back(std::move(done));
    sendStart(name);
}

void AllocationSlices::sendStart(const std::string& name) {
    slices_[name].applied = weightOf(name).value_or(0);
    unsent_.erase(name);  // carried by the start
    systemd_.startSliceAsync(name, startPropertiesOf(name), [this, name, alive = std::weak_ptr<int>(lifetime_)](Result<void> r) {
        if (alive.expired()) return;
        // Made by an earlier manager (or by hand): ours from now on, with
        // our properties (only those a unit that is not transient takes too).
        if (!r && r.error().name == common::errors::kUnitExists)
            return systemd_.setUnitPropertiesAsync(name, propertiesOf(name), [this, name, alive](Result<void> set) {
                if (!alive.expired()) settle(name, std::move(set));
            });
        settle(name, std::move(r));
    });
}

void AllocationSlices::refresh(const std::string& name, Completion done) {
    auto& slice = slices_[name];
    slice.starting = true;
    slice.pending.push_back(std::move(done));
    // One read, not a property change (which systemd writes to a drop-in
    // and applies, tens of ms under emulation, on every short task).
    systemd_.unitStateAsync(name, [this, name, alive = std::weak_ptr<int>(lifetime_)](Result<scope::UnitState> state) {
        if (alive.expired()) return;
        if (state && state->active == "active") {
            // There, with what it was made with: only its weight may be due,
            // and follows with the others.
            settle(name, {});
            if (auto w = weightOf(name); w && slices_[name].sum) setWeight(name, *w);
            return;
        }
        // Stopped (by an operator) or not to be read: started again, whole
        // (one that is still loaded gets our properties).
        slices_[name].applied = 0;
        sendStart(name);
    });
}

void AllocationSlices::settle(const std::string& name, Result<void> r) {
    if (!r) spdlog::warn("Failed to make slice {}: {}", name, r.error().message);
    auto it = slices_.find(name);
    if (it == slices_.end()) return;
    it->second.starting = false;
    if (r)
        it->second.made = true;
    else
        it->second.applied = 0;
    auto waiting = std::move(it->second.pending);
    for (auto& w : waiting) w(r);
}

void AllocationSlices::stopped(const std::string& unit) {
    auto it = members_.find(unit);
    if (it == members_.end() || !it->second.running) return;
    countRunning(it->second, false);
    it->second.running = false;
    addToSums(it->second.chain, it->second.cpu, false, {});
}

void AllocationSlices::reweigh(const std::string& unit, const TaskCpu& cpu) {
    auto it = members_.find(unit);
    if (it == members_.end() || it->second.cpu == cpu) return;
    auto& m = it->second;
    if (m.running && m.cpu.shares != cpu.shares) {
        // Every slice of the chain has this task's shares in it: none goes
        // to 0 between the two, so nothing is made or dropped.
        for (const auto& s : m.chain) {
            slices_[s].sum += cpu.shares;
            slices_[s].scopeWeights += cpu.scopeWeight();
        }
        addToSums(m.chain, m.cpu, false, {});
    }
    // A quota given now: its scope has the cpu controller, and its weight
    // (the caller sends it with the quota).
    if (cpu.keepsWeight && !m.onScope) {
        if (m.running) countRunning(m, false);
        m.onScope = true;
        if (m.running) countRunning(m, true);
    }
    m.cpu = cpu;
}

bool AllocationSlices::weightOnScope(const std::string& unit) const {
    auto it = members_.find(unit);
    return it == members_.end() || it->second.onScope;
}

void AllocationSlices::leave(const std::string& unit) {
    if (auto d = deferred_.find(unit); d != deferred_.end()) {
        // Its start ended while it waited for a removal: it never entered.
        auto& waiting = slices_[d->second.slices.allocation].afterRemoval;
        std::erase(waiting, unit);
        deferred_.erase(d);
        release(unit);
        return;
    }
    auto it = members_.find(unit);
    if (it == members_.end()) return release(unit);
    stopped(unit);
    const auto container = it->second.chain.back();
    const auto alloc = it->second.allocation;
    members_.erase(it);
    if (auto& c = slices_[container]; c.direct) --c.direct;
    auto& slice = slices_[alloc];
    slice.units.erase(unit);
    if (slice.members) --slice.members;
    if (slice.members == 0 && !slice.removing) removeAllocation(alloc);
}

void AllocationSlices::removeAllocation(const std::string& name) {
    slices_[name].removing = true;
    // No weight for a slice on its way out.
    std::erase_if(unsent_, [&](const auto& u) {
        auto it = slices_.find(u.first);
        return u.first == name || (it != slices_.end() && it->second.parent == name);
    });
    removals_.push_back(name);
    kickLane();
}

void AllocationSlices::removed(const std::string& name, Result<void> r) {
    // NoSuchUnit: already gone (stopped by hand, or never made). Any
    // other failure leaves it to the dangling reconciler.
    if (!r && r.error().name != common::errors::kNoSuchUnit)
        spdlog::warn("Failed to remove the slice {} of a forgotten allocation: {}", name, r.error().message);
    auto& slice = slices_[name];
    slice.removing = false;
    slice.made = false;
    slice.applied = 0;
    for (auto& [child, c] : slices_)
        if (c.parent == name && c.overflow) {
            c.made = false;
            c.applied = 0;
        }
    auto waiting = std::move(slice.afterRemoval);
    if (waiting.empty() && slice.members == 0) {
        // Its overflow slices went with it (systemd stops a slice's
        // children first). A place claimed meanwhile keeps its count.
        for (auto it = slices_.begin(); it != slices_.end();) {
            const bool gone = (it->first == name || (it->second.parent == name && it->second.overflow)) &&
                              it->second.direct == 0 && it->second.members == 0;
            it = gone ? slices_.erase(it) : std::next(it);
        }
        scales_.erase(name);
        return;
    }
    // A start came meanwhile: it wins, and makes the slice again.
    for (const auto& unit : waiting) {
        auto d = deferred_.find(unit);
        if (d == deferred_.end()) continue;
        auto entry = std::move(d->second);
        deferred_.erase(d);
        enterNow(unit, entry.slices, entry.cpu, entry.startScope, std::move(entry.scopeStarted),
                 std::move(entry.made));
    }
}

void AllocationSlices::restore(const std::string& unit, const std::string& slice, const std::string& allocation,
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

void AllocationSlices::setSharedCpus(const std::set<unsigned>& cpus, Completion done) {
    sharedCpus_ = cpus;
    const auto share = scope::poolSlice(layout_, scope::Pool::Shared);
    auto it = slices_.find(share);
    // Not made yet: its start carries them.
    if (it == slices_.end() || (!it->second.made && !it->second.starting)) return done({});
    scope::UnitProperties p;
    p.emplace_back("AllowedCPUs", sdbus::Variant(scope::cpuMask(cpus)));
    systemd_.setUnitPropertiesAsync(share, p, std::move(done));
}

std::string AllocationSlices::allocationOf(const std::string& unit) const {
    auto it = members_.find(unit);
    return it == members_.end() ? std::string() : it->second.allocation;
}

size_t AllocationSlices::membersOf(const std::string& slice) const {
    auto it = slices_.find(slice);
    return it == slices_.end() ? 0 : it->second.members;
}

bool AllocationSlices::held(const Slice& slice) { return !slice.overflow && (slice.members || slice.removing); }

std::set<std::string> AllocationSlices::allocationSlices() const {
    std::set<std::string> out;
    for (const auto& [name, slice] : slices_)
        if (held(slice)) out.insert(name);
    return out;
}

bool AllocationSlices::holdsAllocationSlice(const std::string& slice) const {
    auto it = slices_.find(slice);
    return it != slices_.end() && held(it->second);
}

}  // namespace taskscope::manager
