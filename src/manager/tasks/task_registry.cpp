// The registry's own part (task_registry.hpp): admission, the procedures'
// events, a task's end. Requests are task_registry_requests.cpp's,
// recovery task_registry_recovery.cpp's.
#include "manager/tasks/task_registry.hpp"

#include <chrono>
#include <utility>

#include "common/clock.hpp"
#include "common/error_names.hpp"
#include "manager/launch/task_dirs.hpp"
#include "manager/node/fd_budget.hpp"
#include "manager/tasks/start_procedure.hpp"
#include "scope/unit_name.hpp"

namespace taskscope::manager {

namespace {

using common::makeError;
using common::Result;
namespace errors = common::errors;

// The longest unit name taskscope's own files can be named after: systemd
// takes 255 characters, as a file name does, and the files named after the
// unit add up to 9 (the record's "<unit>.json.tmp" while it is written, the
// spool's "<unit>.release"). A longer one failed half-way: with logs, in
// mkfifo (an Internal error); without, its record could not be written and
// the manager aborted, taking every start under way with it.
constexpr size_t kTaskUnitNameMax = 240;

// A stopped task still running this long after its signal is shutting
// down gracefully: it no longer holds a place among the stops in flight
// (stop_pacer.hpp), so a long grace does not hold the others' signals
// back; its end comes at its own pace. Most tasks end within it: a
// process that takes the default SIGTERM dies at once.
constexpr std::chrono::milliseconds kStopSlowAfter{1000};

// A task's unit name, for a name every part of taskscope can keep. The
// name is also the stem of the task's log files in its allocation's log
// dir, so a slash is refused, as Nomad refuses it in task names for its
// task dirs; anything else is escaped where it is used.
Result<std::string> taskUnitName(const std::string& allocId, const std::string& task) {
    auto unit = scope::taskScopeName(allocId, task);
    if (!unit) return unit.error();
    if (task.find('/') != std::string::npos)
        return makeError(errors::kInvalidName, "task '" + task + "' contains '/': a task's name names its log files");
    if (unit->size() > kTaskUnitNameMax)
        return makeError(errors::kInvalidName, "unit name " + *unit + " is " + std::to_string(unit->size()) +
                                                   " characters; taskscope names files after it and takes at most " +
                                                   std::to_string(kTaskUnitNameMax));
    return unit;
}

}  // namespace

TaskRegistry::TaskRegistry(Config config, scope::SystemdClient& systemd, scope::BlockingSystemd& startup,
                           common::EventLoop& loop, std::string objectPrefix, std::set<unsigned> usableCpus,
                           scope::CgroupHost host)
    : config_(std::move(config)),
      store_(config_.stateDir),
      spool_(config_.logSpoolDir),
      systemd_(systemd),
      startup_(startup),
      loop_(loop),
      objectPrefix_(std::move(objectPrefix)),
      host_(std::move(host)),
      node_(NodeLimits::detect(host_)),
      pool_(std::move(usableCpus), config_.systemCores, host_.unified()),
      allocSlices_(scope::SliceLayout{config_.slice, config_.bucketFanout, config_.scopesPerSlice}, systemd_, &loop_,
                   config_.sliceWeightInterval, config_.sliceWeightNodeInterval),
      stops_(config_.stopWindow, kStopSlowAfter, &loop_, [this](const std::string& unit) { admitStop(unit); },
             [this](std::function<void()> answered) {
                 // Through the root slice: always active, and no operator
                 // can stop it, so its start job never starts anything.
                 systemd_.roundTripAsync("-.slice", [this, answered = std::move(answered)](Result<void> r) {
                     if (!r) notes_->notDone(TaskNotes::Weight::Detail, "make a round trip through systemd", r.error());
                     answered();
                 });
             }),
      records_(store_, loop_),
      startWorker_(loop_),
      cgroupWorker_(loop_),
      killer_(scope::makeScopeKiller(host_, config_.slice, systemd_, cgroupWorker_)),
      exits_(loop_, store_, config_.logSpoolDir, cgroupWorker_, *this),
      end_({stops_, allocSlices_, exits_, spool_, *killer_, records_, host_, liveShims_}, *this) {
    allocSlices_.onWeightMoved([this](const std::string& unit) { weightMoved(unit); });
    records_.setLastWord([this](const std::string& unit, const common::Error& why) {
        notes_->notDone(TaskNotes::Weight::Error, "save task " + unit, why,
                        "the manager ends here: systemd restarts it, and it recovers from what is on disk");
    });
    allocSlices_.setNotDone({[this](bool detail, const std::string& what, const common::Error& why,
                                    const std::string& then) {
        notes_->notDone(detail ? TaskNotes::Weight::Detail : TaskNotes::Weight::Warning, what, why, then);
    }});
}

void TaskRegistry::weightMoved(const std::string& unit) {
    auto* e = byUnit(unit);
    // A task still starting takes it from the slices when its start ends.
    if (!e || e->record.state == TaskState::Starting || e->record.weightOnScope) return;
    e->record.weightOnScope = true;
    records_.persist(e->record);
    if (events_) events_->taskChanged(e->record);
}

// An entry's stop procedure cancels its own timer as it goes: the loop
// outlives the registry (a restart in the unit tier).
TaskRegistry::~TaskRegistry() = default;

// --- the map and the queues -------------------------------------------------

Result<TaskRegistry::Entry*> TaskRegistry::find(const std::string& allocId, const std::string& task) const {
    auto it = tasks_.find(Key{allocId, task});
    if (it != tasks_.end()) return it->second.get();
    // A name no unit could have gets the more useful error.
    if (auto unit = taskUnitName(allocId, task); !unit) return unit.error();
    return makeError(errors::kNoSuchTask, "no task " + task::label(allocId, task));
}

TaskRegistry::Entry* TaskRegistry::byUnit(const std::string& unit) const {
    auto it = units_.find(unit);
    if (it == units_.end()) return nullptr;
    return tasks_.at(it->second).get();
}

void TaskRegistry::insert(std::unique_ptr<Entry> entry) {
    const auto& r = entry->record;
    Key key{r.allocId, r.name};
    units_[r.unit] = key;
    tasks_[std::move(key)] = std::move(entry);
}

TaskRegistry::Queue TaskRegistry::erase(const TaskRecord& record) {
    const Key key{record.allocId, record.name};
    auto it = tasks_.find(key);
    if (it == tasks_.end()) return {};
    auto& e = *it->second;
    const auto unit = record.unit;  // `record` may be the entry's own
    exits_.forget(unit);
    auto queued = std::move(e.queue);
    units_.erase(unit);
    tasks_.erase(it);
    return queued;
}

void TaskRegistry::release(Entry& e, std::function<void()> removed) {
    const auto& r = e.record;
    // Asked now, with its entry still there: whether another task of the
    // allocation is known.
    const bool last = lastOfAlloc(r.allocId, r.name);
    const bool grew = e.holdings.releaseRest(
        holdingParts(), last,
        [this, label = task::label(r), removed = std::move(removed), alive = std::weak_ptr<int>(lifetime_)](Result<void> done) {
            if (alive.expired()) return;
            // What stays is no task's: the next manager's recovery sweeps it.
            if (!done)
                notes_->notDone(TaskNotes::Weight::Warning, "remove the dirs of task " + label, done.error(),
                                "the next start of the manager removes them");
            if (removed) removed();
        });
    if (grew) applySharedPool();
}

void TaskRegistry::runOrphans(Queue queued) {
    // Operations that waited for an erased task find it gone and say so.
    for (auto& op : queued) op();
}

void TaskRegistry::submit(const Key& key, std::function<void()> op) {
    tasks_.at(key)->queue.push_back(std::move(op));
    runNext(key);
}

void TaskRegistry::runNext(const Key& key) {
    auto it = tasks_.find(key);
    if (it == tasks_.end()) return;
    auto& e = *it->second;
    if (e.busy || e.queue.empty()) return;
    auto op = std::move(e.queue.front());
    e.queue.pop_front();
    e.busy = true;
    op();
}

void TaskRegistry::operationDone(const Key& key) {
    auto it = tasks_.find(key);
    if (it == tasks_.end()) return;
    it->second->busy = false;
    runNext(key);
}

// --- reads --------------------------------------------------------------------

Result<const TaskRecord*> TaskRegistry::get(const std::string& allocId, const std::string& task) const {
    auto e = find(allocId, task);
    if (!e) return e.error();
    return &(*e)->record;
}

std::vector<const TaskRecord*> TaskRegistry::list() const {
    std::vector<const TaskRecord*> out;
    for (const auto& [key, e] : tasks_) out.push_back(&e->record);
    return out;
}

bool TaskRegistry::allocHasLiveTasks(const std::string& allocId) const {
    for (auto it = tasks_.lower_bound(Key{allocId, ""}); it != tasks_.end() && it->first.first == allocId; ++it)
        if (!it->second->record.finished()) return true;
    return false;
}

bool TaskRegistry::lastOfAlloc(const std::string& allocId, const std::string& task) const {
    // Only the allocation's own entries (the map is ordered by allocation
    // first): forgetting every task of a full node looked at every task
    // once per forget.
    for (auto it = tasks_.lower_bound(Key{allocId, ""}); it != tasks_.end() && it->first.first == allocId; ++it)
        if (it->first.second != task) return false;
    return true;
}

bool TaskRegistry::ownsSlice(const std::string& slice) const {
    if (allocSlices_.holdsAllocationSlice(slice)) return true;
    const auto parsed = scope::parseAllocationSlice(allocSlices_.layout(), slice);
    if (!parsed) return false;
    auto it = tasks_.lower_bound(Key{parsed->allocId, ""});
    return it != tasks_.end() && it->first.first == parsed->allocId;
}

size_t TaskRegistry::startsUnderWay() const {
    size_t n = 0;
    for (const auto& [key, e] : tasks_)
        if (e->record.state == TaskState::Starting) ++n;
    return n;
}

// --- starts -------------------------------------------------------------------

void TaskRegistry::start(const std::string& allocId, const std::string& task, const std::string& specJson,
                         StartDone done) {
    if (draining_)
        return done(makeError(errors::kShuttingDown,
                              "the manager is stopping; task " + task::label(allocId, task) +
                                  " was not started (nothing of it was made): ask again once it is back"));
    auto unit = taskUnitName(allocId, task);
    if (!unit) return done(unit.error());
    // Nested, its allocation's slice must be a unit name too (the share
    // tree's is the longer): refused now, with nothing made.
    if (config_.nestedSlices)
        if (auto slice = allocSlices_.place(allocId, false); !slice) return done(slice.error());
    if (tasks_.count(Key{allocId, task}))
        return done(makeError(errors::kTaskExists, "task " + task::label(allocId, task) + " already exists"));
    if (const auto* other = byUnit(*unit))
        return done(makeError(errors::kUnitNameCollision, "task " + task::label(allocId, task) + " would run in unit " +
                                                              *unit + ", which belongs to task " +
                                                              task::label(other->record)));
    // Refused before anything exists, with the numbers, rather than failing
    // half-way with EMFILE. Starts admitted whose descriptors are not open
    // yet (waiting for their turn on the loop or on the start worker) count
    // as if they were.
    if (auto budget = checkStartBudget(preparing_); !budget) return done(budget.error());
    ++preparing_;

    // The entry exists from the request on (state "starting", busy with
    // this start): a second start of the task, or of one with the same
    // unit, is refused, and its other requests wait for the start.
    auto created = std::make_unique<Entry>();
    Entry& entry = *created;
    auto& rec = entry.record;
    rec.allocId = allocId;
    rec.name = task;
    rec.unit = *unit;
    rec.objectPath = scope::taskObjectPath(objectPrefix_, *unit);
    // Parsed now (the text is kept for GetTaskSpec); a refusal is said on a
    // later turn with the rest of the spec's work.
    auto parsed = spec::parseTaskSpec(specJson);
    rec.specText = specJson;
    if (parsed) rec.spec = std::move(*parsed);
    rec.state = TaskState::Starting;
    entry.busy = true;
    entry.inBudget = true;
    entry.startDone = std::move(done);
    StartContext ctx{config_,       spool_, records_,  systemd_,   loop_,    startWorker_,
                     cgroupWorker_, pool_,  shimHome_, startHook_, netnsOf_, nullptr, &node_, {}};
    if (config_.nestedSlices) ctx.slices = &allocSlices_;
    ctx.lastOfAlloc = [this](const std::string& alloc, const std::string& name) { return lastOfAlloc(alloc, name); };
    StartEvents& heard = *this;
    entry.start = std::make_unique<StartProcedure>(std::move(ctx), rec,
                                                   parsed ? std::nullopt : std::optional(parsed.error()), heard);
    const Key key{allocId, task};
    insert(std::move(created));
    // The rest (the spec resolved, task dirs made, cores assigned:
    // milliseconds under emulation) on a later turn of the loop: a burst of
    // starts is admitted at once, and the reads queued behind it on the bus
    // wait for no start's work but the one under way.
    loop_.post([this, alive = std::weak_ptr<int>(lifetime_), key] {
        if (alive.expired()) return;
        auto it = tasks_.find(key);
        if (it != tasks_.end() && it->second->start) it->second->start->begin();
    });
}

void TaskRegistry::startProgressed(const TaskRecord& draft, StartStep step) {
    auto it = tasks_.find(Key{draft.allocId, draft.name});
    if (it == tasks_.end()) return;
    auto& e = *it->second;
    // What readers see of it meanwhile (it stays "starting").
    auto& r = e.record;
    r.cpus = draft.cpus;
    r.reservedCores = draft.reservedCores;
    r.pid = draft.pid;
    r.shimPid = draft.shimPid;
    if (draft.shimPid > 0) liveShims_[draft.shimPid] = draft.unit;
    r.startedAtUs = draft.startedAtUs;
    r.cgroup = draft.cgroup;
    r.processSpec = draft.processSpec;
    r.slice = draft.slice;
    if (step >= StartStep::Spawned && e.inBudget) {
        e.inBudget = false;
        --preparing_;
    }
}

void TaskRegistry::sharedPoolGrew() { applySharedPool(); }

void TaskRegistry::retire(std::unique_ptr<StartProcedure> start) {
    retired_.push_back(std::move(start));
    loop_.post([this, alive = std::weak_ptr<int>(lifetime_)] {
        if (!alive.expired()) retired_.clear();
    });
}

void TaskRegistry::startEnded(const TaskRecord& draft, Result<void> outcome) {
    const Key key{draft.allocId, draft.name};
    auto& e = *tasks_.at(key);  // busy with its start: still there
    if (e.inBudget) {
        e.inBudget = false;
        --preparing_;
    }
    auto done = std::move(e.startDone);
    if (outcome) e.holdings = e.start->takeHoldings();
    const auto profile = notes_->wantsDetail() ? e.start->clock().summary() : std::string();
    retire(std::move(e.start));
    if (!outcome) {
        // Its undo list has run and given back all it took: the entry goes.
        if (events_) events_->taskStartFailed(e.record, outcome.error().name);
        auto queued = erase(e.record);
        done(outcome.error());
        runOrphans(std::move(queued));
        return checkDrained();
    }
    e.record = draft;
    auto& rec = e.record;
    // Its weight went to its scope after its record was written (a task of
    // its allocation started meanwhile): on disk too.
    if (config_.nestedSlices && !rec.weightOnScope && allocSlices_.weightOnScope(rec.unit)) {
        rec.weightOnScope = true;
        records_.persist(rec);
    }
    notes_->started(rec, profile);
    if (events_) events_->taskAdded(rec);
    done(&rec);
    // A task that ran and ended before its start was complete: its exit
    // record's event was left for now.
    if (exits_.exitRecordExists(rec.unit)) exits_.collect(rec.unit);
    operationDone(key);
    // A reservation shrinks the pool; a shared start may have taken a pool
    // that changed meanwhile.
    applySharedPool();
    // (The requests that waited for the start may have removed it.)
    if (auto it = tasks_.find(key); it != tasks_.end()) {
        auto& t = *it->second;
        // A nested shared task has its share slice's cores, whatever they are now.
        if (pool_.active() && !t.record.finished() && !t.record.reservedCores && !t.record.slice.empty())
            t.record.cpus = pool_.shared();
        else if (pool_.active() && !t.record.finished() && !t.record.reservedCores && !t.poolQueued &&
                 t.record.cpus != pool_.shared()) {
            t.poolQueued = true;
            submit(key, [this, key] { applyPool(key); });
        }
    }
    checkDrained();
}

void TaskRegistry::drain(std::chrono::milliseconds bound, std::function<void()> drained) {
    draining_ = true;
    drained_ = std::move(drained);
    if (const auto left = startsUnderWay()) notes_->draining(left);
    // Done when the last start under way ends (startEnded asks), or at the
    // bound, whichever comes first.
    drainTimer_ = loop_.addTimer(common::EventLoop::Clock::now() + bound, [this, alive = std::weak_ptr<int>(lifetime_)] {
        if (alive.expired()) return;
        drainTimer_ = 0;
        endDrain();
    });
    checkDrained();
}

void TaskRegistry::checkDrained() {
    if (drained_ && startsUnderWay() == 0) endDrain();
}

void TaskRegistry::endDrain() {
    if (!drained_) return;
    if (drainTimer_) loop_.cancelTimer(drainTimer_);
    drainTimer_ = 0;
    if (const auto left = startsUnderWay()) notes_->drainCutShort(left);
    auto drained = std::move(drained_);
    drained_ = nullptr;
    drained();
}

// --- ends (the exit watch's events) ---------------------------------------------------------------------

void TaskRegistry::shimsReaped(const std::set<pid_t>& reaped) {
    // Everything reaped in one wakeup is matched in one pass over the
    // tasks: a stop of every task on a full node reaps thousands of shims,
    // and a pass per shim made that quadratic. A starting task's shim is
    // watched by its start instead.
    const auto watched = [](const TaskRecord& r) { return !r.finished() && r.state != TaskState::Starting; };
    std::vector<std::string> emptied;  // the scopes their shims have left
    for (const pid_t pid : reaped)
        if (auto it = liveShims_.find(pid); it != liveShims_.end()) {
            emptied.push_back(it->second);
            liveShims_.erase(it);
        }
    std::vector<std::pair<Key, pid_t>> gone;
    for (auto& [key, e] : tasks_)
        if (reaped.count(e->record.shimPid) && watched(e->record)) gone.emplace_back(key, e->record.shimPid);
    // A shim gone may end a task and run what waited for it, which can
    // remove or restart other tasks: each is looked up again first.
    for (const auto& [key, shim] : gone) {
        auto it = tasks_.find(key);
        if (it == tasks_.end()) continue;
        auto& e = *it->second;
        if (e.record.shimPid == shim && watched(e.record)) end_.shimGone(e.record);
    }
    // A stop's place frees once its task has ended and its scope emptied. A
    // task still running without its shim is not ended: its stop, queued,
    // must still go.
    for (const auto& unit : emptied)
        if (auto* e = byUnit(unit); !e || e->record.finished()) stops_.ended(unit);
}

void TaskRegistry::shimDiedWithoutRecord(const TaskRecord& r) { notes_->shimDiedWithoutRecord(r); }

void TaskRegistry::exitRecorded(const std::string& unit) {
    // A starting task's exit is collected when its start completes.
    if (auto* e = byUnit(unit); e && !e->record.finished() && e->record.state != TaskState::Starting)
        exits_.collect(unit);
}

void TaskRegistry::spoolDrained(const std::string& unit) {
    // Only a task an older manager started has a hold here.
    if (auto* e = byUnit(unit); e && (e->logHold.first || e->logHold.second)) {
        e->logHold = {};
        spool_.release(unit);
    }
}

void TaskRegistry::exitRead(const std::string& unit, Result<ExitStatus> status) {
    auto* e = byUnit(unit);
    if (!e || e->record.finished()) return;
    auto& r = e->record;
    if (!status) {
        // It has ended (it left a record) in an unknown way: lost, with the
        // reason, never left "running" for ever.
        end_.lost(r, e->stop.get(), "its exit record could not be read: " + status.error().message);
        return notes_->lost(r);
    }
    end_.exited(r, e->stop.get(), *status);
    notes_->exited(r);
}

void TaskRegistry::orphanEnded(const std::string& unit) {
    auto* e = byUnit(unit);
    if (!e || e->record.finished()) return;
    end_.lost(e->record, e->stop.get(), "its shim was killed; the task's processes have ended with no exit code recorded");
    notes_->lost(e->record);
}

// --- what a task's end tells (task_end.hpp) ---------------------------------------------------------------

void TaskRegistry::coresFreed(TaskRecord& r) { releaseCpus(r); }

void TaskRegistry::endAnnounced(TaskRecord& r) {
    if (!events_) return;
    events_->taskChanged(r);
    events_->taskExited(r);
    r.exitReported = true;
}

void TaskRegistry::leftoversSurvived(const std::string& unit, const common::Error& error) {
    notes_->notDone(TaskNotes::Weight::Warning, "kill what task " + unit + " left behind", error);
}

}  // namespace taskscope::manager
