// The allocations' slices as the tasks' code uses them: the ledger's
// decisions (slice_ledger.hpp) turned into calls, the slices made before a
// task's scope (in its own call where new), the calls that wait on them,
// and the weights and removals handed to the pacer (weight_pacer.hpp).
#include "manager/node/allocation_slices.hpp"

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

AllocationSlices::AllocationSlices(scope::SliceLayout layout, scope::SystemdClient& systemd, common::EventLoop* loop,
                                   std::chrono::milliseconds weightInterval,
                                   std::chrono::milliseconds nodeWeightInterval)
    : ledger_(std::move(layout)), systemd_(systemd), pacer_(systemd, loop, weightInterval, nodeWeightInterval) {
    pacer_.onRemoved([this](const std::string& slice, Result<void> r) { removed(slice, std::move(r)); });
}

AllocationSlices::~AllocationSlices() = default;

Result<scope::TaskSlices> AllocationSlices::claim(const std::string& unit, const std::string& allocId, bool reserved) {
    auto placed = ledger_.claim(unit, allocId, reserved);
    forgetDropped();
    return placed;
}

void AllocationSlices::forgetDropped() {
    // A slice's entry went with everything known of it, its waiters too.
    for (const auto& slice : ledger_.takeDropped()) {
        pacer_.forget(slice);
        pending_.erase(slice);
    }
}

void AllocationSlices::setWeights(const SliceLedger::WeightChanges& changes) {
    for (const auto& [slice, weight] : changes) pacer_.setWeight(slice, weight);
}

void AllocationSlices::enter(const std::string& unit, const scope::TaskSlices& slices, const TaskCpu& cpu,
                             ScopeStart startScope, Completion scopeStarted, Completion made) {
    // Its removal still waits in the lane: not sent, so the slice stays,
    // as it is, for this task.
    if (ledger_.removing(slices.allocation) && pacer_.cancelRemoval(slices.allocation))
        ledger_.removalCancelled(slices.allocation);
    if (ledger_.removing(slices.allocation)) {
        // Its stop was sent first: systemd would run the two jobs in that
        // order. The slice is made again once the stop is done.
        ledger_.waitForRemoval(unit, slices.allocation);
        deferred_[unit] = Deferred{slices, cpu, std::move(startScope), std::move(scopeStarted), std::move(made)};
        return;
    }
    enterNow(unit, slices, cpu, startScope, std::move(scopeStarted), std::move(made));
}

void AllocationSlices::enterNow(const std::string& unit, const scope::TaskSlices& slices, const TaskCpu& cpu,
                                const ScopeStart& startScope, Completion scopeStarted, Completion made) {
    auto entry = ledger_.enter(unit, slices, cpu);
    forgetDropped();
    // The others' weights go to their scopes before this start is sent.
    weightsToScopes(entry.toScopes);
    // The weights this start changes wait until its scope is answered.
    pacer_.scopeStarting();
    setWeights(entry.weights);
    auto join = std::make_shared<Join>();
    join->done = std::move(made);
    std::vector<std::string> carried;
    for (const auto& [s, make] : entry.chain) {
        switch (make) {
            case SliceLedger::Make::Carry:  // new: made in the scope's own call
                pending_[s].push_back(Join::part(join));
                carried.push_back(s);
                break;
            case SliceLedger::Make::Refresh:
                pending_[s].push_back(Join::part(join));
                refresh(s);
                break;
            case SliceLedger::Make::Restart:
                pending_[s].push_back(Join::part(join));
                sendStart(s);
                break;
            case SliceLedger::Make::Wait:
                pending_[s].push_back(Join::part(join));
                break;
            case SliceLedger::Make::None:
                break;
        }
    }
    startCarrying(unit, carried, startScope, std::move(scopeStarted));
    join->drop();
}

void AllocationSlices::weightsToScopes(const std::vector<std::pair<std::string, std::optional<uint64_t>>>& moved) {
    for (const auto& [unit, weight] : moved) {
        if (weight) {
            systemd_.setUnitPropertiesAsync(
                unit, scope::sliceProperties({.cpuWeight = *weight, .allowedCpus = std::nullopt}),
                [unit, weight = *weight, notDone = notDone_](Result<void> r) {
                    // Its share among its allocation's tasks is the default's
                    // until its next UpdateTask; nothing of the task is lost.
                    if (!r) notDone(false, "set CPUWeight=" + std::to_string(weight) + " on " + unit, r.error());
                });
        }
        if (weightMoved_) weightMoved_(unit);
    }
}

void AllocationSlices::startCarrying(const std::string& unit, const std::vector<std::string>& carried,
                                     const ScopeStart& startScope, Completion scopeStarted) {
    scope::AuxUnits aux;
    for (const auto& s : carried) {
        aux.units.push_back({s, ledger_.startPropertiesOf(s)});
        pacer_.carried(s, ledger_.weightOf(s).value_or(0));
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
    startScope(aux, ledger_.weightOnScope(unit),
               [this, unit, carried, accepted, startScope, scopeStarted = std::move(scopeStarted),
                alive = std::weak_ptr<int>(lifetime_)](Result<void> r) mutable {
                   if (alive.expired()) return scopeStarted(std::move(r));
                   if (carried.empty() || *accepted || r) {
                       if (!*accepted && r)
                           for (const auto& s : carried) settle(s, {});
                       pacer_.scopeAnswered();
                       return scopeStarted(std::move(r));
                   }
                   // Refused: started on their own now, for the tasks waiting for them
                   // (also when this task's scope was refused for its own reasons).
                   for (const auto& s : carried) {
                       pacer_.unknown(s);
                       sendStart(s);
                   }
                   // One of them existed (left by a crash, or made by hand): the scope
                   // is asked again without them, after their starts.
                   if (r.error().name == common::errors::kUnitExists) {
                       // Said at the operator's level: something left it there
                       // (a crash, a hand), and test_alloc_slices looks for it.
                       notDone_(false, "make a slice with a task's scope", r.error(),
                                "it exists already: made on its own");
                       // (With its weight if a task of its allocation started
                       // meanwhile: that sent it to a scope that was not there yet.)
                       return startScope({}, ledger_.weightOnScope(unit),
                                         [this, scopeStarted = std::move(scopeStarted), alive](Result<void> again) {
                                             if (!alive.expired()) pacer_.scopeAnswered();
                                             scopeStarted(std::move(again));
                                         });
                   }
                   pacer_.scopeAnswered();
                   scopeStarted(std::move(r));
               });
}

void AllocationSlices::sendStart(const std::string& name) {
    pacer_.carried(name, ledger_.weightOf(name).value_or(0));
    systemd_.startSliceAsync(name, ledger_.startPropertiesOf(name),
                             [this, name, alive = std::weak_ptr<int>(lifetime_)](Result<void> r) {
                                 if (alive.expired()) return;
                                 // Made by an earlier manager (or by hand): ours from now on, with
                                 // our properties (only those a unit that is not transient takes too).
                                 if (!r && r.error().name == common::errors::kUnitExists)
                                     return systemd_.setUnitPropertiesAsync(name, ledger_.propertiesOf(name),
                                                                            [this, name, alive](Result<void> set) {
                                                                                if (!alive.expired())
                                                                                    settle(name, std::move(set));
                                                                            });
                                 settle(name, std::move(r));
                             });
}

void AllocationSlices::refresh(const std::string& name) {
    // One read, not a property change (which systemd writes to a drop-in
    // and applies, tens of ms under emulation, on every short task).
    systemd_.unitStateAsync(name, [this, name, alive = std::weak_ptr<int>(lifetime_)](Result<scope::UnitState> state) {
        if (alive.expired()) return;
        if (state && state->active == "active") {
            // There, with what it was made with: only its weight may be due,
            // and follows with the others.
            settle(name, {});
            if (auto w = ledger_.weightDue(name)) pacer_.setWeight(name, *w);
            return;
        }
        // Stopped (by an operator) or not to be read: started again, whole
        // (one that is still loaded gets our properties).
        pacer_.unknown(name);
        sendStart(name);
    });
}

void AllocationSlices::settle(const std::string& name, Result<void> r) {
    if (!r) notDone_(false, "make slice " + name, r.error());
    if (!ledger_.settled(name, r.ok())) return;
    if (!r) pacer_.unknown(name);
    auto it = pending_.find(name);
    if (it == pending_.end()) return;
    auto waiting = std::move(it->second);
    pending_.erase(it);
    for (auto& w : waiting) w(r);
}

void AllocationSlices::stopped(const std::string& unit) {
    setWeights(ledger_.stopped(unit));
}

void AllocationSlices::reweigh(const std::string& unit, const TaskCpu& cpu) {
    setWeights(ledger_.reweigh(unit, cpu));
}

void AllocationSlices::leave(const std::string& unit) {
    if (auto d = deferred_.find(unit); d != deferred_.end()) {
        // Its start ended while it waited for a removal: it never entered.
        ledger_.abandon(unit, d->second.slices.allocation);
        deferred_.erase(d);
        return forgetDropped();
    }
    auto leaving = ledger_.leave(unit);
    forgetDropped();
    setWeights(leaving.weights);
    if (!leaving.removal.empty()) pacer_.remove(leaving.removal);
}

void AllocationSlices::removed(const std::string& name, Result<void> r) {
    // NoSuchUnit: already gone (stopped by hand, or never made). Any
    // other failure leaves it to the dangling reconciler.
    if (!r && r.error().name != common::errors::kNoSuchUnit)
        notDone_(false, "remove the slice " + name + " of a forgotten allocation", r.error(),
                 "the dangling-scope reconciler takes it");
    auto removal = ledger_.removed(name);
    for (const auto& s : removal.unmade) pacer_.unknown(s);
    forgetDropped();
    // A start came meanwhile: it wins, and makes the slice again.
    for (const auto& unit : removal.reenter) {
        auto d = deferred_.find(unit);
        if (d == deferred_.end()) continue;
        auto entry = std::move(d->second);
        deferred_.erase(d);
        enterNow(unit, entry.slices, entry.cpu, entry.startScope, std::move(entry.scopeStarted), std::move(entry.made));
    }
}

void AllocationSlices::heldWeights(const std::map<std::string, uint64_t>& held) {
    for (const auto& [name, weight] : held)
        if (ledger_.knows(name)) pacer_.held(name, weight);
}

void AllocationSlices::reapplyWeights() {
    setWeights(ledger_.rescale(pacer_.heldWeights()));
}

void AllocationSlices::setSharedCpus(const std::set<unsigned>& cpus, Completion done) {
    // Not made yet: its start carries them.
    if (!ledger_.setSharedCpus(cpus)) return done({});
    scope::SliceResources r;
    r.allowedCpus = cpus;
    systemd_.setUnitPropertiesAsync(ledger_.shareSlice(), scope::sliceProperties(r), std::move(done));
}

}  // namespace taskscope::manager
