// The registry after a restart: every recorded task re-adopted, collected,
// removed (a start cut off before its task ran) or marked lost. Runs at
// startup, before the manager takes its bus name: the blocking calls here
// (systemd's answer for a cgroup, reads of /proc and cgroup files) are a
// startup's, never a running loop's.

#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "common/clock.hpp"
#include "common/fd_store.hpp"
#include "common/files.hpp"
#include "manager/launch/task_dirs.hpp"
#include "manager/tasks/start_procedure.hpp"
#include "manager/tasks/task_registry.hpp"
#include "scope/cgroup_stats.hpp"
#include "scope/slice_weights.hpp"
#include "scope/unit_name.hpp"

namespace taskscope::manager {

bool TaskRegistry::shimAlive(const TaskRecord& r) const {
    if (r.shimPid <= 0) return false;
    // The shim's command line names its exit file, which names the unit:
    // a recycled PID cannot pass this check.
    auto cmdline = common::readFile("/proc/" + std::to_string(r.shimPid) + "/cmdline");
    if (!cmdline) return false;
    return cmdline->find(store_.exitFile(r.unit) + '\0') != std::string::npos;
}

bool TaskRegistry::scopeHasProcesses(const TaskRecord& r) const {
    const auto procs = host_.processesFile(r.cgroup);
    return procs && scope::cgroupHasProcesses(*procs);
}

void TaskRegistry::learnCgroup(TaskRecord& r) {
    if (!r.cgroup.empty() || r.finished()) return;
    // Its start wrote the record before systemd placed the task, and its
    // manager died before writing where: systemd knows.
    auto cgroup = startup_.controlGroup(r.unit);
    if (!cgroup) {
        notes_->notDone(TaskNotes::Weight::Detail, "ask systemd for the cgroup of " + r.unit, cgroup.error());
        return;
    }
    r.cgroup = *cgroup;
    records_.persist(r);
}

void TaskRegistry::recoverOne(Entry& e, std::map<std::string, common::UniqueFd>& stored, size_t& readopted,
                              std::vector<Key>& neverRan) {
    auto& r = e.record;
    const auto unit = r.unit;
    // A task an older manager started: its shim holds nothing, so the
    // manager's stored hold is kept until the streamer has drained it.
    if (auto hold = spool_.readopt(unit, stored)) e.logHold = std::move(*hold);
    if (r.finished()) return;
    // Its start wrote the record, with the pid, but not the pid into the
    // spool's description: the streamer needs it to copy the task's output
    // to the journal, whether it runs or has ended and is drained now.
    if (r.pid > 0) spool_.fillTaskPid(unit, r.pid);
    const auto keepCores = [&] {
        if (!r.reservedCores) {
            pool_.join(unit);
            return e.holdings.tookCores();
        }
        if (auto ok = pool_.restore(unit, r.cpus); !ok)
            notes_->notDone(TaskNotes::Weight::Error, "restore the cores of " + unit, ok.error(),
                            "it runs on the cores it has, which the pool may give another task");
        else
            e.holdings.tookCores();
    };
    if (exits_.exitRecordExists(unit)) return exits_.collect(unit);
    learnCgroup(r);
    if (shimAlive(r)) {
        ++readopted;
        if (r.state == TaskState::Stopping && r.killDeadlineUs != 0) {
            // A stop was under way: its grace runs on from where it was.
            stopOf(e).resumeDeadline();
            notes_->readopted(r, "while it stops; kill in " +
                                     std::to_string(r.killDeadlineUs > bootUs() ? (r.killDeadlineUs - bootUs()) / 1000
                                                                                : 0) +
                                     " ms");
        } else if (r.state == TaskState::Stopping && r.queuedStopSignal) {
            // Its stop waited its turn: it waits again (recover() asks).
            notes_->readopted(r, "its stop waits its turn");
        } else {
            r.state = TaskState::Running;
            notes_->readopted(r, "");
        }
        keepCores();
        if (shimHome_)
            if (auto moved = shimHome_->adopt(r.shimPid); !moved)
                notes_->notDone(TaskNotes::Weight::Warning,
                                "move shim " + std::to_string(r.shimPid) + " of " + unit + " to the shims' home",
                                moved.error(), "it stays where it is");
    } else if (scopeHasProcesses(r)) {
        // The shim was killed but the task was not: it runs on, can be
        // stopped, and is never reported ended while it has processes.
        if (r.state != TaskState::Stopping) r.state = TaskState::Running;
        if (r.state == TaskState::Stopping && r.killDeadlineUs != 0) stopOf(e).resumeDeadline();
        keepCores();
        exits_.watchOrphan(unit, host_.processesFile(r.cgroup).value_or(""), host_.eventsFile(r.cgroup).value_or(""));
    } else if (r.shimPid > 0 && store_.abortedShim(unit) == r.shimPid) {
        // Its start was cut off (the manager before us died mid-start) and
        // its shim left without running it: the caller was never told it
        // started, so it goes, and asking again works. Once every record
        // is in: its allocation's dirs go only with the allocation's last task.
        neverRan.push_back(Key{r.allocId, r.name});
    } else {
        // Neither an exit record nor a living shim: the node rebooted or
        // the shim was killed. Say so rather than invent an exit code.
        r.state = TaskState::Lost;
        r.lostReason = "its shim is gone and left no exit record";
        r.exit.finishedAtUs = common::wallClockUs();
        r.reservedCores = false;
        spool_.markExited(unit);
        notes_->lost(r);
        records_.persist(r);
    }
}

common::Result<void> TaskRegistry::recover() {
    if (auto r = store_.prepare(); !r) return r.error().context("prepare " + config_.stateDir);
    if (auto r = spool_.prepareDir(); !r) return r.error().context("prepare " + config_.logSpoolDir);
    // Watch before scanning, so an exit written during the scan is seen.
    if (auto r = exits_.start(); !r) return r;

    auto loaded = store_.loadAll();
    if (!loaded) return loaded.error();
    // A record this manager cannot read costs its own task, never the
    // daemon's start (issue 58): it is set aside and said at error level;
    // the task it described is unknown from here on, and its scope, if
    // one runs, is the reconciler's like any scope no record names.
    for (auto& u : loaded->unreadable)
        notes_->notDone(TaskNotes::Weight::Error, "read the task record " + u.file, u.why,
                        u.keptAs.empty() ? "it could not be set aside either, and is read again at the next start"
                                         : "kept as " + u.keptAs + "; the task it described is not known to this manager");
    auto& records = loaded->records;
    // The fifo holds a manager before 0.2 put in systemd's fd store.
    auto stored = common::takeStoredFds();
    pool_.setRecovering(true);
    size_t readopted = 0;
    std::vector<Key> neverRan;
    for (auto& rec : records) {
        auto entry = std::make_unique<Entry>();
        entry->record = std::move(rec);
        entry->record.objectPath = scope::taskObjectPath(objectPrefix_, entry->record.unit);
        // Its dirs, by the one rule (task_dirs.hpp): kept while it is known.
        const auto& r = entry->record;
        entry->holdings = TaskHoldings(r.unit);
        entry->holdings.tookDirs(OwnedTaskDirs::of(r.spec, config_.isolation, config_.stateDir, r.allocId, r.name));
        auto& e = *entry;
        insert(std::move(entry));
        recoverOne(e, stored, readopted, neverRan);
    }

    // The nested layout's tasks: their slices' members and sums, and every
    // weight set again (tasks may have ended while no manager was there).
    for (auto& [key, e] : tasks_) {
        auto& r = e->record;
        if (r.slice.empty()) continue;
        allocSlices_.restore(r.unit, r.slice, r.allocSlice, AllocationSlices::taskCpu(r.spec.resources),
                             !r.finished(), r.cgroup, r.weightOnScope);
        e->holdings.tookSlicePlace();
        if (!r.finished() && !r.reservedCores && pool_.active()) r.cpus = pool_.shared();
    }
    reapplySliceWeights();
    // Stops that waited their turn when the manager before us went: asked
    // again, in the pacer's order from here on.
    for (auto& [key, e] : tasks_)
        if (!e->record.finished() && e->record.queuedStopSignal) stopOf(*e).resumeQueue();
    for (const auto& key : neverRan) {
        auto& e = *tasks_.at(key);
        const auto r = e.record;
        // A start cut off mid-way may have left its spool entry.
        e.holdings.tookSpoolEntry();
        release(e);
        records_.unpersist(r.unit, [this, unit = r.unit, alive = std::weak_ptr<int>(lifetime_)](common::Result<void> gone) {
            // Still on disk: the next restart finds it cut off again.
            if (!gone && !alive.expired())
                notes_->notDone(TaskNotes::Weight::Error, "remove the record of " + unit, gone.error(),
                                "the next start of the manager finds it cut off again");
        });
        (void)erase(r);
    }
    // Task dirs of starts cut off before their record was written.
    std::vector<std::pair<std::string, std::string>> owned;
    for (const auto& [key, e] : tasks_) owned.push_back(key);
    const size_t swept = sweepUnownedTaskDirs(config_.stateDir, owned);
    notes_->recovered(readopted, records.size(), neverRan.size(), swept);
    // Marks of starts that failed while their manager lived (it removed
    // the task then) or whose task is gone: nothing reads them any more.
    // Exit records no record names (a forget whose removal failed, an
    // older version's, one made by hand): a start of their name would
    // take one for its own task's exit. A start looks only for names
    // suspected of leftovers (record_writer.hpp): what cannot be removed
    // here is suspected.
    for (const auto& [unit, path] : store_.exitsEntries())
        if (!units_.count(unit) && ::unlink(path.c_str()) < 0 && errno != ENOENT) records_.suspectLeftovers(unit);
    // Holds of tasks no record names any more: not ours to keep.
    for (auto& [name, fd] : stored) common::unstoreFd(name);
    // Reservations that ended while we were away have left cores the
    // shared tasks should have again.
    pool_.setRecovering(false);
    applySharedPool();
    return {};
}

void TaskRegistry::attach(TaskEvents& events) {
    events_ = &events;
    for (auto& [key, e] : tasks_) {
        auto& r = e->record;
        if (r.finished() && !r.exitReported) {
            events_->taskExited(r);
            r.exitReported = true;
            records_.persist(r);
        }
    }
}

void TaskRegistry::reapplySliceWeights() {
    auto cgroups = allocSlices_.weighedSliceCgroups();
    if (cgroups.empty()) return allocSlices_.reapplyWeights();
    // A slice's cpu.weight (v2) or cpu.shares (v1, on its own scale) is the
    // kernel's copy of its CPUWeight: only the weights that differ are
    // sent. Read off the loop (cgroup files wait behind the kernel's cgroup
    // lock); the sums are sent once the reads are back.
    cgroupWorker_.submit([this, host = host_, cgroups = std::move(cgroups),
                          alive = std::weak_ptr<int>(lifetime_)]() -> std::function<void()> {
        std::map<std::string, uint64_t> held;
        for (const auto& [slice, cgroup] : cgroups)
            if (auto weight = scope::readCpuWeight(host, cgroup)) held[slice] = *weight;
        return [this, held = std::move(held), alive] {
            if (alive.expired()) return;
            allocSlices_.heldWeights(held);
            allocSlices_.reapplyWeights();
        };
    });
}

}  // namespace taskscope::manager
