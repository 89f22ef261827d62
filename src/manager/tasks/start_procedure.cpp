// A start's steps, in order, each on the loop or a worker (start_procedure.hpp);
// its failure and undo are start_undo.cpp's.
#include "manager/tasks/start_procedure.hpp"

#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>

#include "common/clock.hpp"
#include "common/error_names.hpp"
#include "common/files.hpp"
#include "manager/launch/isolation.hpp"
#include "manager/launch/task_dirs.hpp"
#include "manager/launch/task_resolve.hpp"
#include "manager/node/fd_budget.hpp"
#include "scope/cgroup_host.hpp"
#include "wire/log_files.hpp"

namespace taskscope::manager {

namespace {

using common::makeError;
using common::Result;

// Out of descriptors despite the check (another thread of the kernel's,
// a miscount): the caller gets the numbers, the failed step after them.
common::Error withFdNumbers(common::Error e) {
    if (e.name != common::errors::kResourceExhausted) return e;
    auto fds = fdUsage();
    if (!fds) return e;
    auto named = checkStartBudget(*fds);
    const std::string numbers = named ? "the manager has " + std::to_string(fds->open) + " of its " +
                                            std::to_string(fds->limit) + " file descriptors open"
                                      : named.error().message;
    return makeError(common::errors::kResourceExhausted, numbers + " (" + e.message + ")");
}

scope::UnitProperties baseProperties(const std::string& slice, const std::string& label, bool delegateAll,
                                     bool unified) {
    scope::UnitProperties p;
    p.emplace_back("Slice", sdbus::Variant(slice));
    p.emplace_back("Description", sdbus::Variant("taskscope task " + label));
    // A failed scope would otherwise stay loaded until someone resets it.
    p.emplace_back("CollectMode", sdbus::Variant(std::string("inactive-or-failed")));
    // Stats read these counters.
    scope::addAccountingProperties(p);
    // Exec sessions join a running task's scope through systemd's
    // AttachProcessesToUnit, which systemd allows only into delegated units
    // ("Process migration not available on non-delegated units"). A unit
    // is delegated with no controller by DelegateControllers= with an empty
    // list (systemd src/core/dbus-cgroup.c, bus_cgroup_set_property: it sets
    // delegate and, for an empty mask, no controllers); Delegate=true would
    // delegate them all, and a scope that wants the cpu controller gets a
    // cpu cgroup whose cpu.max systemd writes at every realize, each write a
    // walk of every task group on the node in the kernel
    // (tg_set_cfs_bandwidth; issue 49). On cgroup v1 the scopes stay fully
    // delegated: there every controller is a hierarchy of its own that exec
    // sessions and the freezer-based kill are proven to reach
    // (test_streamer_exec, test_manager_lifecycle), and v1 has no cpu.max.
    if (delegateAll || !unified)
        p.emplace_back("Delegate", sdbus::Variant(true));
    else
        p.emplace_back("DelegateControllers", sdbus::Variant(std::vector<std::string>{}));
    return p;
}

// An isolated task's devices, through systemd (a scope takes the cgroup
// device properties): the standard nodes its private /dev binds, its own
// pts instance and /dev/net/tun, the spec's own devices, nothing else.
// systemd resolves each path to its major:minor when it applies them (a
// BPF program on v2, devices.allow on v1).
void addDeviceProperties(scope::UnitProperties& p, const std::vector<spec::Device>& devices) {
    using Rule = sdbus::Struct<std::string, std::string>;
    p.emplace_back("DevicePolicy", sdbus::Variant(std::string("closed")));
    std::vector<Rule> allow;
    for (const char* node : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
                             "/dev/ptmx", "/dev/net/tun"})
        allow.emplace_back(std::string(node), std::string("rwm"));
    allow.emplace_back(std::string("char-pts"), std::string("rw"));
    for (const auto& d : devices) allow.emplace_back(d.hostPath, d.permissions);
    p.emplace_back("DeviceAllow", sdbus::Variant(allow));
}

}  // namespace

const char* toString(StartStep step) {
    switch (step) {
        case StartStep::Admitted:
            return "admitted";
        case StartStep::Placed:
            return "placed";
        case StartStep::Resolved:
            return "resolved";
        case StartStep::Preparing:
            return "preparing";
        case StartStep::Spawned:
            return "spawned";
        case StartStep::Launched:
            return "launched";
        case StartStep::Recorded:
            return "recorded";
        case StartStep::ScopeMade:
            return "scope made";
        case StartStep::Released:
            return "released";
        case StartStep::Running:
            return "running";
    }
    return "unknown";
}

StartProcedure::StartProcedure(StartContext ctx, task::TaskRecord draft, std::optional<common::Error> refused,
                               StartEvents& events)
    : ctx_(std::move(ctx)),
      draft_(std::move(draft)),
      refused_(std::move(refused)),
      events_(events),
      holdings_(draft_.unit) {
    clock_.onLoop("admit");
    // It counts on the shared pool from its admission: a reservation made
    // meanwhile must leave it a core.
    ctx_.cpus.join(draft_.unit);
    holdings_.tookCores();
    // Every start has a fate within start_timeout_ms of its admission: it
    // runs, or it fails with nothing of it left (issue 48).
    deadlineTimer_ = ctx_.loop.addTimer(
        common::EventLoop::Clock::now() + std::chrono::milliseconds(ctx_.config.startTimeoutMs),
        [this, alive = std::weak_ptr<int>(lifetime_)] {
            if (alive.expired()) return;
            deadlineTimer_ = 0;
            onDeadline();
        });
}

StartProcedure::~StartProcedure() {
    if (reportWatch_) ctx_.loop.removeFd(reportWatch_);
    if (deadlineTimer_) ctx_.loop.cancelTimer(deadlineTimer_);
    endWait();
}

void StartProcedure::onDeadline() {
    // Released: the task runs its command, so the start is not failed (its
    // answer waits only for its exec report, its record and its cgroup).
    if (failure_ || step_ >= StartStep::Released) return;
    // Held by a fault point: whatever it has made so far is undone.
    if (held_) return fail(overloaded());
    // Preparing and still queued on the start worker (behind a spawn the
    // kernel holds: under a fork bomb clone3 into a cgroup waited minutes
    // for the cgroup lock): its turn is skipped, nothing of it was made,
    // and it fails now. Under way there: it fails once its files and shim
    // are back, so that the undo list finds them all.
    if (step_ == StartStep::Preparing) {
        int waiting = kTurnWaiting;
        if (workerTurn_ && workerTurn_->compare_exchange_strong(waiting, kTurnSkipped)) {
            if (lookForLeftovers_) ctx_.records.suspectLeftovers(draft_.unit);
            return fail(overloaded());
        }
        deadlinePassed_ = true;
        return;
    }
    fail(overloaded());
}

common::Error StartProcedure::overloaded() const {
    return makeError(common::errors::kOverloaded,
                     "start task " + label() + ": not made within start_timeout_ms (" +
                         std::to_string(ctx_.config.startTimeoutMs) + " ms; it reached \"" + toString(step_) +
                         "\"): the node (systemd, the bus or the kernel's cgroup lock) is overloaded; nothing of "
                         "the task ran or is left, and the start may be retried");
}

bool StartProcedure::failedOverloaded() const {
    return failure_ && failure_->name == common::errors::kOverloaded;
}

bool StartProcedure::reach(StartStep step) {
    step_ = step;
    events_.startProgressed(draft_, step);
    if (ctx_.config.faultPoints) {
        std::string name = toString(step);
        std::replace(name.begin(), name.end(), ' ', '-');
        if (draft_.allocId.rfind("fault-hold-" + name + "-", 0) == 0) held_ = true;
    }
    return !held_;
}

void StartProcedure::begin() {
    clock_.waited("turn");
    if (failure_) return;
    if (refused_) return fail(*refused_);
    const auto& config = ctx_.config;
    const auto& allocId = draft_.allocId;
    const auto& task = draft_.name;
    const auto& unit = draft_.unit;
    // The start's own copy: the node's defaults and the hook's additions
    // are not the record's (GetTask shows the spec as asked).
    auto spec = draft_.spec;
    spec.isolation = effectiveIsolation(spec.isolation, spec.isolationGiven, config.isolation);
    // The node's limit, not systemd's 15% of pid_max: one fork bomb must not
    // take the process table and the CPUs from every other task.
    if (!spec.resources.pidsMax && config.defaultPidsMax) spec.resources.pidsMax = config.defaultPidsMax;
    // On the loop only what reads or changes the manager's own state (the
    // plugin registry, the CPU pool, the slices); what reads the system's
    // databases and files (the user, the binary, the devices, the dirs)
    // runs on the start worker (prepareLaunch).
    if (ctx_.hook)
        if (auto r = ctx_.hook(allocId, task, spec); !r) return fail(r.error());
    clock_.onLoop("hook");
    auto cpus = ctx_.cpus.assign(unit, spec.resources);
    if (!cpus) return fail(cpus.error());
    spec.resources.allowedCpus = cpus->cpus;
    draft_.cpus = cpus->cpus;
    draft_.reservedCores = cpus->reserved;
    if (ctx_.slices) {
        auto placed = ctx_.slices->claim(draft_.unit, allocId, cpus->reserved);
        if (!placed) return fail(placed.error());
        holdings_.tookSlicePlace();
        slices_ = std::move(*placed);
        draft_.slice = slices_->parent();
        draft_.allocSlice = slices_->allocation;
        cpu_ = AllocationSlices::taskCpu(spec.resources);
        // Known at its entry (startScope); until then, as far as a record
        // on disk says, not on its scope: a manager that recovers it sends
        // the weight again should its allocation grow, rather than never.
        draft_.weightOnScope = false;
        // A shared task's cores are its share slice's (one change moves
        // them all); AllowedCPUs on its scope would keep it on the old pool
        // when the pool grows (the kernel intersects a child's cpuset with
        // its parent's).
        if (!cpus->reserved) spec.resources.allowedCpus.clear();
    }
    if (!reach(StartStep::Placed)) return;
    clock_.onLoop("cpus+slices");
    // Which dirs are taskscope's to remove should the start fail: of the
    // spec as asked, as a forget has them (task_dirs.hpp).
    holdings_.tookDirs(OwnedTaskDirs::of(draft_.spec, config.isolation, config.stateDir, allocId, task));

    const auto& store = ctx_.records.store();
    const auto logDir = store.logDir(allocId);
    LaunchPaths paths;
    paths.exitFile = store.exitFile(unit);
    paths.processSpec = store.processSpecFile(unit);
    draft_.processSpec = paths.processSpec;
    if (spec.joinsAllocNetwork()) {
        auto netns =
            ctx_.netnsOf
                ? ctx_.netnsOf(allocId)
                : Result<std::string>(makeError(common::errors::kNoSuchNetwork, "this manager has no networks"));
        if (!netns) return fail(netns.error().context("task " + label()));
        paths.netns = *netns;
    }
    // The copy is the streamer's: on a node without it ("streamer": false)
    // a task that asks for it would silently get none.
    if (!config.streamer && spec.logJournal.value_or(false))
        return fail(makeError(common::errors::kJournalUnavailable,
                              "log_journal needs taskscope-streamer, and this manager hands task output to none "
                              "(\"streamer\": false in its configuration): turn the streamer on, or log_journal off"));
    std::optional<LogSettings> spooled;
    // Output for the caller's paths (Nomad's log fifos) that the journal
    // should copy too: the streamer goes between, reading the spool's fifos
    // and writing those paths, as it would write files (issue 59). The
    // node's default counts, unless the spec says otherwise.
    const bool toPaths = !spec.stdoutPath.empty() || !spec.stderrPath.empty();
    const bool forward = toPaths && config.streamer && spec.logJournal.value_or(config.logJournal);
    if (forward) {
        spooled = LogSettings{logDir, config.logMaxFiles, config.logMaxFileSizeMb, true,
                              wire::SpoolDescription::Forward{spec.stdoutPath, spec.stderrPath, 0}};
        // Held by the shim: logmon reads its fifo until every writer has
        // gone, once, and the streamer's restarts must not look like that.
        paths.forwardStdout = spec.stdoutPath;
        paths.forwardStderr = spec.stderrPath;
    } else if (spec.logs && !config.streamer) {
        // The streamer's names, its first file (wire/log_files.hpp).
        paths.stdoutFile = logDir + "/" + wire::logFileBase(task, "stdout") + ".0";
        paths.stderrFile = logDir + "/" + wire::logFileBase(task, "stderr") + ".0";
    } else if (spec.logs) {
        spooled = LogSettings{logDir, spec.logMaxFiles ? spec.logMaxFiles : config.logMaxFiles,
                              spec.logMaxFileSizeMb ? spec.logMaxFileSizeMb : config.logMaxFileSizeMb,
                              spec.logJournal.value_or(config.logJournal), std::nullopt};
    } else {
        paths.stdoutFile = spec.stdoutPath;
        paths.stderrFile = spec.stderrPath;
    }
    if (spooled) {
        paths.stdoutFile = ctx_.spool.stdoutFifo(unit);
        paths.stderrFile = ctx_.spool.stderrFifo(unit);
        paths.releaseFifo = ctx_.spool.releaseFifo(unit);
        // journald looks up the sender's pid for every line: the task's
        // must name it until the streamer has sent its last one.
        paths.keepTaskZombie = spooled->journal;
        journal_ = spooled->journal;
    }
    properties_ = baseProperties(slices_ ? draft_.slice : config.slice, label(), spec.delegate,
                                 !ctx_.node || ctx_.node->unified);
    for (auto& p : scope::resourceProperties(spec.resources)) properties_.push_back(std::move(p));
    if (spec.isolation.filesystem) addDeviceProperties(properties_, spec.devices);
    clock_.onLoop("paths");
    if (!reach(StartStep::Resolved)) return;

    // The shims' home (outside the manager's cgroup), made again first if
    // it has gone, asynchronously.
    auto launch = [this, spec = std::move(spec), paths = std::move(paths), spooled, logDir,
                   alive = std::weak_ptr<int>(lifetime_)](std::vector<std::string> joinCgroups) mutable {
        if (alive.expired()) return;
        paths.joinCgroups = std::move(joinCgroups);
        prepare(std::move(spec), std::move(paths), spooled, logDir);
    };
    if (!ctx_.shimHome) return launch({});
    ctx_.shimHome->whenReady(std::move(launch));
}

void StartProcedure::prepare(spec::TaskSpec spec, LaunchPaths paths, std::optional<LogSettings> spooled,
                             std::string logDir) {
    if (!reach(StartStep::Preparing)) return;
    // The rest makes files and a process: mkdir, mkfifo, the spool
    // description, posix_spawn (whose vfork holds the calling thread until
    // the shim has exec'd: milliseconds under emulation). On the loop,
    // every read queued behind a burst of starts waited for all of theirs,
    // so it runs on the start worker, one start after another, and the
    // start goes on from the loop once the shim exists.
    // Made on the worker, owned from here on should the start fail.
    if (spooled) holdings_.tookSpoolEntry();
    holdings_.tookProcessSpec();
    const bool lookForLeftovers = ctx_.records.takeLeftoverCheck(draft_.unit);
    lookForLeftovers_ = lookForLeftovers;
    workerTurn_ = std::make_shared<std::atomic<int>>(kTurnWaiting);
    ctx_.startWorker.submit([this, ctx = ctx_, spec = std::move(spec), paths = std::move(paths), spooled, logDir,
                             unit = draft_.unit, allocId = draft_.allocId, task = draft_.name, lookForLeftovers,
                             turn = workerTurn_, alive = std::weak_ptr<int>(lifetime_)]() -> std::function<void()> {
        // Skipped by the deadline while it waited: nothing is made.
        int waiting = kTurnWaiting;
        if (!turn->compare_exchange_strong(waiting, kTurnTaken)) return [] {};
        auto prepared = std::make_shared<Result<Launch>>(
            prepareLaunch(ctx, spec, paths, spooled, logDir, unit, allocId, task, lookForLeftovers));
        return [this, prepared, lookForLeftovers, alive] {
            if (alive.expired()) return;
            clock_.waited("prepare");
            if (!*prepared) {
                // Its leftovers may still be there: the next start looks again.
                if (lookForLeftovers) ctx_.records.suspectLeftovers(draft_.unit);
                return fail(withFdNumbers(prepared->error()));
            }
            launch_ = std::move(**prepared);
            const bool go = reach(StartStep::Spawned);
            if (deadlinePassed_) return fail(overloaded());
            if (!go) return;
            // The shim's "pid N" comes through the loop: no start ever makes
            // the manager wait for a process to be scheduled.
            watchReports();
            clock_.onLoop("watch");
        };
    });
    clock_.onLoop("submit");
}

Result<Launch> StartProcedure::prepareLaunch(const StartContext& ctx, spec::TaskSpec spec,
                                             const LaunchPaths& paths, const std::optional<LogSettings>& spooled,
                                             const std::string& logDir, const std::string& unit,
                                             const std::string& allocId, const std::string& task,
                                             bool lookForLeftovers) {
    // Runs on the start worker: the filesystem, the spool's and the store's
    // paths (constants), the shim's path; nothing of the loop's. First the
    // spec on this node: NSS lookups, the binary in PATH, the devices and
    // the dirs (which wait on the disk, and on NSS on a slow directory).
    if (auto r = resolveTaskSpec(spec); !r) return r.error();
    if (ctx.node)
        if (auto r = checkTaskOnNode(spec, *ctx.node); !r) return r.error();
    if (auto r = prepareTaskDirs(spec.isolation, ctx.config.isolation, ctx.config.stateDir, allocId, task); !r)
        return r.error();
    if (auto r = resolveRootIdentity(spec); !r) return r.error();
    // Only a task whose output is kept gets the directory: the streamer
    // removes it with the allocation's last task it knows, and never learns
    // of a task with logs off.
    if (spec.logs && !(spooled && spooled->forward))
        if (auto r = common::makeDirs(logDir, common::kPrivateDirMode); !r)
            return r.error().context("create log directory");
    // Left by an earlier task of this name (a failed start's mark, an exit
    // record a failed forget kept), looked for only where suspected
    // (record_writer.hpp): even a look-up of a name the dentry cache lacks
    // takes the exits directory's lock, and a 10,000-task drain held it for
    // 34 s (stop 40, bench/README.md). Looked up before the unlink, which
    // takes the lock exclusively even for nothing. One that cannot be
    // removed would be read as this task's exit: the start fails.
    if (lookForLeftovers)
        for (const auto& left : {paths.exitFile, ctx.records.store().abortedMark(unit)}) {
            struct stat st {};
            if (::lstat(left.c_str(), &st) == 0 && ::unlink(left.c_str()) < 0 && errno != ENOENT)
                return common::errnoError("remove " + left + ", left by an earlier task of this name", errno);
        }
    if (spooled && spooled->journal)
        if (auto r = journalSocketReady(ctx.config.journalSocket); !r) return r.error();
    auto settings = spooled;
    // The paths are the task's to name: the streamer writes them as root,
    // so it takes only what root or the task's own user owns, as the shim
    // does when it opens them itself. The uid is known once resolved.
    if (settings && settings->forward) settings->forward->uid = spec.uid;
    if (settings)
        if (auto added = ctx.spool.add(unit, allocId, task, *settings); !added)
            return added.error().context("prepare logs");
    auto launch = spawnShim(ctx.config.shimPath, spec, paths);
    if (!launch && spooled) ctx.spool.remove(unit);
    return launch;
}

void StartProcedure::watchReports() {
    reportWatch_ = ctx_.loop.addFd(launch_.report.get(), POLLIN, [this](short) { onReport(); });
}

void StartProcedure::onReport() {
    auto line = takeReportLine(launch_.report.get(), launch_.pending);
    if (line && !*line) return;  // the rest of the line is still on its way
    ctx_.loop.removeFd(reportWatch_);
    reportWatch_ = 0;
    if (step_ < StartStep::Released) {
        clock_.waited("shim pid");
        return onPid(line ? Result<std::string>(**line) : Result<std::string>(line.error()));
    }
    clock_.waited("exec report");
    launch_.report.reset();
    onExec(line ? acceptRelease(**line) : Result<void>(line.error().context("release task")));
}

void StartProcedure::onPid(Result<std::string> line) {
    auto r = line ? acceptPid(launch_, *line) : Result<void>(line.error().context("start task"));
    if (!r) return fail(withFdNumbers(r.error()));
    draft_.pid = launch_.taskPid;
    draft_.shimPid = launch_.shimPid;
    draft_.startedAtUs = common::wallClockUs();
    // Before the task's first instruction, so before its first line: the
    // streamer sends each line with this pid as its credentials.
    if (journal_) ctx_.spool.setTaskPid(draft_.unit, draft_.pid);
    if (!reach(StartStep::Launched)) return;
    // The record goes to disk while systemd makes the scope, not after: a
    // start waited for the two one after the other (a journal commit
    // under emulation is tens of ms). On disk as running before the task
    // runs its first instruction: a crash from here on finds it (a crash
    // before the scope exists finds its shim gone, the task never run).
    // Its cgroup is not known yet: systemd places the task, and the kernel
    // says where once the scope exists (written again then, not waited
    // for: a manager that dies before that write asks systemd at startup).
    // Held here, the record and the scope are still made (the undo of
    // both is what a hold at this step proves); only the release waits.
    (void)reach(StartStep::Recorded);
    writeRecord();
    if (!slices_) {
        slicesMade_ = true;
        startScope({}, true, [this, alive = std::weak_ptr<int>(lifetime_)](Result<void> made) {
            if (!alive.expired()) onScope(std::move(made));
        });
    } else {
        // The slices above it that are new are made in its scope's own
        // call; calls for the others just before it, not waited for:
        // systemd takes one connection's calls in order, and the scope's
        // start job waits for its slice's (allocation_slices.hpp). Their
        // result holds back the task's exec: a task never runs in a slice
        // without its weight.
        const auto alive = std::weak_ptr<int>(lifetime_);
        ctx_.slices->enter(
            draft_.unit, *slices_, cpu_,
            [this, alive](const scope::AuxUnits& aux, bool carryWeight, scope::SystemdClient::Completion started) {
                // A start abandoned meanwhile still answers, so that slices
                // it was to carry are made for the others waiting on them.
                if (alive.expired())
                    return started(common::makeError(common::errors::kSystemdFailed, "the start was abandoned"));
                startScope(aux, carryWeight, std::move(started));
            },
            [this, alive](Result<void> made) {
                if (!alive.expired()) onScope(std::move(made));
            },
            [this, alive](Result<void> made) {
                if (!alive.expired()) onSlices(std::move(made));
            });
    }
    clock_.onLoop("record + systemd call");
}

void StartProcedure::startScope(const scope::AuxUnits& aux, bool carryWeight,
                                scope::SystemdClient::Completion started) {
    // Written with the cgroup, once the scope exists (onCgroup).
    draft_.weightOnScope = carryWeight;
    if (carryWeight)
        return ctx_.systemd.startScopeAsync(draft_.unit, {static_cast<uint32_t>(draft_.pid)}, properties_, aux,
                                            std::move(started));
    auto properties = properties_;
    scope::dropCpuWeight(properties);
    ctx_.systemd.startScopeAsync(draft_.unit, {static_cast<uint32_t>(draft_.pid)}, properties, aux,
                                 std::move(started));
}

void StartProcedure::onSlices(Result<void> made) {
    if (failure_) return;
    if (!made) return fail(made.error().context("start task " + label() + ": make its slice " + draft_.slice));
    slicesMade_ = true;
    releaseWhenReady();
}

void StartProcedure::writeRecord() {
    auto onDisk = draft_;
    onDisk.state = task::TaskState::Running;
    // Ahead of a drain's record writes and removals: the task's first
    // instruction waits for this one (7.3 s behind a 3,000-task drain's).
    ctx_.records.persist(
        onDisk,
        [this, alive = std::weak_ptr<int>(lifetime_)] {
            if (alive.expired()) return;
            recordOnDisk_ = true;
            releaseWhenReady();
            succeedWhenKnown();
        },
        /*first=*/true);
}

void StartProcedure::onScope(Result<void> made) {
    clock_.waited("systemd job");
    if (failure_) return;
    if (!made) return fail(made.error().context("start task " + label()));
    scopeMade_ = true;
    (void)reach(StartStep::ScopeMade);  // held: the release waits (releaseWhenReady)
    // The kernel's word on where systemd put the task, read once, off the
    // loop (the read waits behind the kernel's cgroup lock).
    ctx_.cgroupWorker.submit([this, pid = draft_.pid, alive = std::weak_ptr<int>(lifetime_)]() {
        auto cgroup = scope::processCgroup(pid);
        return std::function<void()>([this, cgroup = std::move(cgroup), alive] {
            if (!alive.expired()) onCgroup(cgroup);
        });
    });
    // The exec does not wait for it.
    releaseWhenReady();
}

void StartProcedure::onCgroup(std::string cgroup) {
    if (failure_) return;
    clock_.waited("cgroup read");
    cgroupKnown_ = true;
    if (!cgroup.empty() && cgroup != draft_.cgroup) {
        draft_.cgroup = std::move(cgroup);
        events_.startProgressed(draft_, step_);
        writeRecord();
    }
    succeedWhenKnown();
}

void StartProcedure::releaseWhenReady() {
    // The scope and its slices (systemd's jobs done) and the record on disk, once.
    if (failure_ || held_ || !scopeMade_ || !slicesMade_ || !recordOnDisk_ || step_ >= StartStep::Released) return;
    clock_.waited("record on disk");
    if (auto r = sendGo(launch_); !r) {
        launch_.report.reset();
        return fail(r.error().context("start task " + label()));
    }
    (void)reach(StartStep::Released);  // past the deadline: never held
    // The task runs from here on: no deadline can fail it any more.
    if (deadlineTimer_) ctx_.loop.cancelTimer(std::exchange(deadlineTimer_, 0));
    watchReports();
    clock_.onLoop("go");
}

void StartProcedure::onExec(Result<void> released) {
    if (failure_) return;
    if (!released) return fail(released.error().context("start task " + label()));
    execReported_ = true;
    succeedWhenKnown();
}

void StartProcedure::succeedWhenKnown() {
    // Answered once the task runs, its record is on disk as running, and
    // its cgroup is known (readers see it at once; its write is on its way).
    if (failure_ || !execReported_ || !cgroupKnown_ || !recordOnDisk_ || step_ == StartStep::Running) return;
    draft_.state = task::TaskState::Running;
    step_ = StartStep::Running;
    // The task runs: its output is the streamer's to drain and delete
    // (marked exited at its end), no longer a failed start's to remove.
    holdings_.spoolEntryHandedOver();
    events_.startEnded(draft_, {});
}

}  // namespace taskscope::manager
