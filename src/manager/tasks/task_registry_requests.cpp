// The registry's requests that change a running task: signals, stops and
// kills, the shared pool's moves, limits updated, tasks forgotten. Each
// runs in its task's queue (task_registry.cpp).

#include <signal.h>

#include <chrono>

#include "common/cpu_list.hpp"
#include "common/error_names.hpp"
#include "common/signals.hpp"
#include "manager/launch/isolation.hpp"
#include "manager/launch/task_dirs.hpp"
#include "manager/tasks/task_registry.hpp"
#include "scope/resources.hpp"

namespace taskscope::manager {

namespace {

using common::makeError;
using common::Result;
namespace errors = common::errors;

}  // namespace

// --- signals, stops, kills ----------------------------------------------------

void TaskRegistry::signalMain(const TaskRecord& r, int sig, Done done) {
    // Only while the PID is still the task's: it must sit in the task's
    // scope, which a recycled PID never does. The check reads /proc, which
    // waits behind the kernel's cgroup lock: off the loop.
    cgroupWorker_.submit([pid = r.pid, slice = config_.slice, unit = r.unit, label = task::label(r), sig,
                          done = std::move(done)]() -> std::function<void()> {
        auto sent = scope::signalIfInUnit(pid, slice, unit, sig);
        if (!sent && sent.error().name == errors::kNotRunning)
            sent = makeError(errors::kNotRunning, "task " + label + " has no running main process");
        else if (!sent)
            sent = sent.error().context("signal task " + label);
        return [done, sent] { done(sent); };
    });
}

void TaskRegistry::signal(const std::string& allocId, const std::string& task, const std::string& text, Done done) {
    auto e = find(allocId, task);
    if (!e) return done(e.error());
    auto sig = common::parseSignal(text);
    if (!sig) return done(sig.error());
    auto& r = (*e)->record;
    if (r.finished()) return done(makeError(errors::kNotRunning, "task " + task::label(allocId, task) + " has exited"));
    signalMain(r, *sig, std::move(done));
}

void TaskRegistry::stop(const std::string& allocId, const std::string& task, const std::string& text, int64_t graceMs,
                        Done done) {
    auto found = find(allocId, task);
    if (!found) return done(found.error());
    const Key key{allocId, task};
    submit(key, [this, key, text, graceMs, done] {
        auto e = find(key.first, key.second);
        if (!e) return done(e.error());
        done(stopOf(**e).request(text, graceMs));
        operationDone(key);
    });
}

StopProcedure& TaskRegistry::stopOf(Entry& e) {
    if (!e.stop) {
        StopEvents& heard = *this;
        e.stop = std::make_unique<StopProcedure>(StopContext{loop_, stops_, *killer_, records_}, e.record, heard);
    }
    return *e.stop;
}

void TaskRegistry::admitStop(const std::string& unit) {
    auto* e = byUnit(unit);
    if (!e || e->record.finished() || !e->record.queuedStopSignal) return stops_.ended(unit);
    stopOf(*e).admitted();
}

void TaskRegistry::stopChanged(const TaskRecord& r) {
    if (events_) events_->taskChanged(r);
}

void TaskRegistry::signalTask(const TaskRecord& r, int sig) {
    signalMain(r, sig, [this, unit = r.unit](Result<void> s) {
        if (!s) notes_->notDone(TaskNotes::Weight::Detail, "signal " + unit, s.error());
    });
}

void TaskRegistry::stopSent(const TaskRecord& r, int sig, int64_t graceMs) {
    notes_->stopping(r, sig, graceMs);
}

void TaskRegistry::stopQueued(const TaskRecord& r) {
    notes_->stopQueued(r, stops_.inFlight(), stops_.queueLength());
}

void TaskRegistry::killFailed(const TaskRecord& r, const common::Error& error) {
    // The task may still run: its end, should it come, is collected as any
    // other; a StopTask asked again kills again.
    notes_->notDone(TaskNotes::Weight::Warning, "kill task " + task::label(r) + " (" + r.unit + ")", error);
}

// --- the shared pool ----------------------------------------------------------

void TaskRegistry::releaseCpus(TaskRecord& r) {
    auto* e = byUnit(r.unit);
    const bool grew = e && e->holdings.releaseCores(holdingParts());
    r.reservedCores = false;
    if (grew) applySharedPool();
}

void TaskRegistry::applySharedPool() {
    const auto pool = pool_.poolToApply();
    if (!pool) return;
    // The nested layout's shared tasks: one call on their share slice,
    // however many there are (issue 31).
    allocSlices_.setSharedCpus(*pool, [this, pool = *pool, alive = std::weak_ptr<int>(lifetime_)](Result<void> ok) {
        if (alive.expired()) return;
        if (!ok) {
            notes_->notDone(TaskNotes::Weight::Warning, "move the shared tasks to the cores " + common::formatCpuList(pool),
                            ok.error());
            pool_.forgetApplied();
            return;
        }
        nestedTookPool(pool);
    });
    std::vector<Key> stale;
    for (auto& [key, e] : tasks_) {
        const auto& r = e->record;
        // A starting task has no unit yet; its start re-applies when done.
        if (r.finished() || r.reservedCores || r.state == TaskState::Starting || r.cpus == *pool) continue;
        if (!r.slice.empty()) continue;  // nested: its share slice's
        // At most one queued per task: it applies the pool of its time, so
        // a burst of reservations costs each shared task one call.
        if (e->poolQueued) continue;
        e->poolQueued = true;
        stale.push_back(key);
    }
    for (const auto& key : stale) submit(key, [this, key] { applyPool(key); });
}

void TaskRegistry::nestedTookPool(const std::set<unsigned>& pool) {
    // What GetTask shows; on disk the next write of the record has it (a
    // restart gives them the pool of its time anyway).
    for (auto& [key, e] : tasks_) {
        auto& r = e->record;
        if (r.finished() || r.reservedCores || r.slice.empty() || r.state == TaskState::Starting || r.cpus == pool)
            continue;
        r.cpus = pool;
        if (events_) events_->taskChanged(r);
    }
}

void TaskRegistry::applyPool(const Key& key) {
    auto it = tasks_.find(key);
    if (it == tasks_.end()) return;
    auto& e = *it->second;
    e.poolQueued = false;
    const auto pool = pool_.shared();
    if (e.record.finished() || e.record.reservedCores || pool.empty() || e.record.cpus == pool)
        return operationDone(key);
    scope::Resources only;
    only.allowedCpus = pool;
    systemd_.setUnitPropertiesAsync(e.record.unit, scope::resourceProperties(only), [this, key, pool](Result<void> ok) {
        auto it = tasks_.find(key);
        if (it == tasks_.end()) return;
        auto& r = it->second->record;
        if (!ok) {
            // The record keeps the cores the task really has; the next pass
            // looks at every task again.
            notes_->notDone(TaskNotes::Weight::Warning,
                            "move " + r.unit + " to the shared cores " + common::formatCpuList(pool), ok.error());
            pool_.forgetApplied();
        } else if (!r.finished()) {
            r.cpus = pool;
            records_.persist(r);
            if (events_) events_->taskChanged(r);
        }
        operationDone(key);
    });
}

// --- update and forget --------------------------------------------------------

void TaskRegistry::update(const std::string& allocId, const std::string& task, const std::string& text, Done done) {
    auto found = find(allocId, task);
    if (!found) return done(found.error());
    auto res = spec::parseResources(text);
    if (!res) return done(res.error());
    if (res->cores) return done(spec::invalid("resources.cores cannot change on a running task"));
    if (auto r = checkIoOnNode(*res, node_); !r) return done(r.error());
    auto props = scope::resourceProperties(*res);
    if (props.empty()) return done(spec::invalid("no resources to change"));
    const Key key{allocId, task};
    submit(key, [this, key, text, props, change = *res, done] {
        auto found = find(key.first, key.second);
        if (!found) return done(found.error());
        auto& r = (*found)->record;
        if (r.finished()) {
            done(makeError(errors::kNotRunning, "task " + task::label(key.first, key.second) + " has exited"));
            return operationDone(key);
        }
        auto applied = [this, key, text, change, done](Result<void> ok) {
            auto found = find(key.first, key.second);
            if (!found) return done(found.error());
            auto& r = (*found)->record;
            if (!ok) {
                done(ok.error().context("update " + r.unit));
                return operationDone(key);
            }
            // What GetTaskSpec shows from now on: the spec as it now is.
            r.spec.resources = spec::merged(r.spec.resources, change);
            if (change.cpuShares || change.cpuQuotaPercent) {
                allocSlices_.reweigh(r.unit, AllocationSlices::taskCpu(r.spec.resources));
                r.weightOnScope = allocSlices_.weightOnScope(r.unit);
            }
            r.specText = spec::toText(r.spec);
            records_.persist(r);
            notes_->updated(r, text);
            if (events_) events_->taskChanged(r);
            done({});
            operationDone(key);
        };
        // A task alone in its allocation leaves its weight to the slice
        // (allocation_slices.hpp): new shares change the slices' sums only,
        // unless a quota comes with them (its scope then has the cpu
        // controller, and its weight with it).
        auto sent = props;
        if (!allocSlices_.weightOnScope(r.unit) && !change.cpuQuotaPercent)
            scope::dropCpuWeight(sent);
        else if (change.cpuQuotaPercent && !change.cpuShares && r.spec.resources.cpuShares)
            sent.emplace_back("CPUWeight", sdbus::Variant(scope::cpuWeightFromShares(*r.spec.resources.cpuShares)));
        if (sent.empty()) return applied({});
        systemd_.setUnitPropertiesAsync(r.unit, sent, std::move(applied));
    });
}

void TaskRegistry::forget(const std::string& allocId, const std::string& task, Done done) {
    auto found = find(allocId, task);
    if (!found) return done(found.error());
    const Key key{allocId, task};
    submit(key, [this, key, done] {
        auto found = find(key.first, key.second);
        if (!found) return done(found.error());
        auto& r = (*found)->record;
        if (!r.finished()) {
            done(makeError(errors::kStillRunning, "task " + task::label(key.first, key.second) + " is still running"));
            return operationDone(key);
        }
        // Nothing is asked of systemd: every task scope is made with
        // CollectMode=inactive-or-failed, so systemd unloads it once it has
        // ended, failed or not; a unit of the name someone else left failed
        // is reset by the next start of the name. Forgetting a full node
        // therefore never waits behind PID 1's backlog of stops.
        // Answered once the record is off the disk: a restart right after
        // the reply must not bring the task back; one that is still there
        // keeps the task, and the caller hears why.
        records_.unpersist(r.unit, [this, key, done](Result<void> gone) {
            auto it = tasks_.find(key);  // busy with this forget: still there
            if (it == tasks_.end()) return done({});
            auto& rec = it->second->record;
            if (!gone) {
                done(gone.error().context("forget task " + task::label(key.first, key.second) +
                                          ": its record could not be removed"));
                return operationDone(key);
            }
            // unpersist took the process spec with the record: not unlinked again.
            it->second->holdings.processSpecGone();
            // Answered once its dirs are gone too (off the loop): what a
            // caller reads after the answer no longer holds them. The entry
            // goes now: a start of the name from here on makes its dirs on
            // the start worker after their removal.
            auto queued = std::make_shared<Queue>();
            release(*it->second, [this, done, queued] {
                done({});
                runOrphans(std::move(*queued));
            });
            if (events_) events_->taskRemoved(rec);
            *queued = erase(rec);
        });
    });
}

}  // namespace taskscope::manager
