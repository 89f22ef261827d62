#include "manager/task_manager.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <linux/magic.h>
#include <sys/inotify.h>
#include <sys/statfs.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "common/cpu_list.hpp"
#include "common/fd_store.hpp"
#include "common/files.hpp"
#include "common/signals.hpp"
#include "common/unique_fd.hpp"
#include "manager/fd_budget.hpp"
#include "manager/launcher.hpp"
#include "manager/task_dirs.hpp"
#include "manager/task_spec.hpp"
#include "scope/cgroup_path.hpp"
#include "scope/task_scope.hpp"
#include "scope/unit_name.hpp"

namespace taskscope::manager {

namespace {

using common::makeError;
using common::Result;

uint64_t nowUs() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
}

// A stop's deadline outlives the manager process but not the boot (tasks do
// not survive a reboot either), and must not move when the wall clock does.
uint64_t bootUs() {
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

// An unreadable exit record is read again after 50, 100, 200, 400 ms.
constexpr int kExitReadAttempts = 5;
constexpr std::chrono::milliseconds kExitReadRetryDelay{50};

// Out of descriptors despite the check (another thread of the kernel's,
// a miscount): the caller gets the numbers, the failed step after them.
common::Error withFdNumbers(common::Error e) {
    if (e.name != "ResourceExhausted") return e;
    auto fds = fdUsage();
    if (!fds) return e;
    auto named = checkStartBudget(*fds);
    const std::string numbers = named ? "the manager has " + std::to_string(fds->open) + " of its " +
                                            std::to_string(fds->limit) + " file descriptors open"
                                      : named.error().message;
    return common::makeError("ResourceExhausted", numbers + " (" + e.message + ")");
}

// The task's cgroup as the kernel records it: the unified line ("0::")
// on cgroup v2, systemd's own hierarchy ("name=systemd") on v1.
std::string cgroupOf(pid_t pid) {
    auto text = common::readFile("/proc/" + std::to_string(pid) + "/cgroup");
    if (!text) return "";
    std::string unified;
    size_t pos = 0;
    while (pos < text->size()) {
        auto end = text->find('\n', pos);
        if (end == std::string::npos) end = text->size();
        const auto line = text->substr(pos, end - pos);
        pos = end + 1;
        const auto first = line.find(':');
        const auto second = first == std::string::npos ? first : line.find(':', first + 1);
        if (second == std::string::npos) continue;
        const auto controllers = line.substr(first + 1, second - first - 1);
        if (controllers == "name=systemd") return line.substr(second + 1);
        if (line.compare(0, 3, "0::") == 0) unified = line.substr(second + 1);
    }
    return unified;
}

std::string taskLabel(const std::string& allocId, const std::string& task) { return allocId + "/" + task; }

// The cgroup systemd gives a unit in `slice`: each dash of the slice's
// name is a level ("a-b.slice" is /a.slice/a-b.slice), "-.slice" the root.
std::string scopeCgroup(const std::string& slice, const std::string& unit) {
    std::string path;
    constexpr std::string_view kSuffix = ".slice";
    if (slice != "-.slice" && slice.size() > kSuffix.size()) {
        const auto name = slice.substr(0, slice.size() - kSuffix.size());
        for (size_t dash = 0;; ++dash) {
            dash = name.find('-', dash);
            path += "/" + name.substr(0, dash) + ".slice";
            if (dash == std::string::npos) break;
        }
    }
    return path + "/" + unit;
}

scope::UnitProperties baseProperties(const Config& config, const std::string& allocId, const std::string& task) {
    scope::UnitProperties p;
    p.emplace_back("Slice", sdbus::Variant(config.slice));
    p.emplace_back("Description", sdbus::Variant("taskscope task " + taskLabel(allocId, task)));
    // A failed scope would otherwise stay loaded until someone resets it.
    p.emplace_back("CollectMode", sdbus::Variant(std::string("inactive-or-failed")));
    // Stats read these counters; systemd leaves CPU accounting off by default.
    p.emplace_back("MemoryAccounting", sdbus::Variant(true));
    p.emplace_back("CPUAccounting", sdbus::Variant(true));
    p.emplace_back("TasksAccounting", sdbus::Variant(true));
    // Exec sessions join a running task's scope through systemd's
    // AttachProcessesToUnit, which systemd allows only into delegated units.
    p.emplace_back("Delegate", sdbus::Variant(true));
    return p;
}

// An isolated task's devices, through systemd (a scope takes the cgroup
// device properties): the standard nodes its private /dev binds, its own
// pts instance and /dev/net/tun, nothing else.
void addDeviceProperties(scope::UnitProperties& p) {
    using Rule = sdbus::Struct<std::string, std::string>;
    p.emplace_back("DevicePolicy", sdbus::Variant(std::string("closed")));
    std::vector<Rule> allow;
    for (const char* node : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
                             "/dev/ptmx", "/dev/net/tun"})
        allow.emplace_back(std::string(node), std::string("rwm"));
    allow.emplace_back(std::string("char-pts"), std::string("rw"));
    p.emplace_back("DeviceAllow", sdbus::Variant(allow));
}

// The isolation a recorded spec had, as forget needs it (which dirs were
// taskscope's): the node's default applies to a spec without the object.
Isolation recordedIsolation(const std::string& specJson, const IsolationConfig& node) {
    auto spec = parseTaskSpec(specJson);
    if (!spec) return {};
    if (!spec->isolationGiven && node.defaultIsolated) spec->isolation.filesystem = true;
    return spec->isolation;
}

// The longest unit name taskscope's own files can be named after: systemd
// takes 255 characters, as a file name does, and the files named after the
// unit add up to 9 (the record's "<unit>.json.tmp" while it is written, the
// spool's "<unit>.release"). A longer one failed half-way: with logs, in
// mkfifo (an Internal error); without, its record could not be written and
// the manager aborted, taking every start under way with it.
constexpr size_t kTaskUnitNameMax = 240;

// A task's unit name, for a name every part of taskscope can keep. The
// name is also the stem of the task's log files in its allocation's log
// dir, so a slash is refused, as Nomad refuses it in task names for its
// task dirs; anything else is escaped where it is used.
Result<std::string> taskUnitName(const std::string& allocId, const std::string& task) {
    auto unit = scope::taskScopeName(allocId, task);
    if (!unit) return unit.error();
    if (task.find('/') != std::string::npos)
        return makeError("InvalidName", "task '" + task + "' contains '/': a task's name names its log files");
    if (unit->size() > kTaskUnitNameMax)
        return makeError("InvalidName", "unit name " + *unit + " is " + std::to_string(unit->size()) +
                                            " characters; taskscope names files after it and takes at most " +
                                            std::to_string(kTaskUnitNameMax));
    return unit;
}

}  // namespace

TaskManager::TaskManager(Config config, scope::SystemdClient& systemd, common::EventLoop& loop,
                         std::string objectPrefix, std::set<unsigned> usableCpus, CgroupHost host)
    : config_(std::move(config)),
      store_(config_.stateDir),
      spool_(config_.logSpoolDir),
      systemd_(systemd),
      loop_(loop),
      objectPrefix_(std::move(objectPrefix)),
      cgroupRoot_(std::move(host.root)),
      cpus_(std::move(usableCpus), config_.systemCores) {
    struct statfs fs {};
    unified_ = host.unified.value_or(::statfs(cgroupRoot_.c_str(), &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC);
    writer_ = std::make_unique<common::DurableWriter>(loop_);
    spawner_ = std::make_unique<common::LoopWorker>(loop_);
}

TaskManager::~TaskManager() {
    // Every timer an entry holds: the loop outlives us (a restart in the
    // unit tier), and a timer left behind would call into freed memory.
    for (auto& [key, e] : tasks_) {
        if (e->killTimer) loop_.cancelTimer(e->killTimer);
        if (e->exitRetryTimer) loop_.cancelTimer(e->exitRetryTimer);
        if (e->orphanTimer) loop_.cancelTimer(e->orphanTimer);
    }
    if (inotifyWatch_) loop_.removeFd(inotifyWatch_);
    if (signalWatch_) loop_.removeFd(signalWatch_);
    if (inotifyFd_ >= 0) ::close(inotifyFd_);
    if (signalFd_ >= 0) ::close(signalFd_);
}

void TaskManager::persist(const TaskRecord& record, std::function<void()> durable) {
    writer_->write(store_.recordFile(record.unit), StateStore::recordText(record), common::kPrivateFileMode,
                   [unit = record.unit, durable = std::move(durable)](Result<void> r) {
                       // The daemon cannot promise "no exit code lost" once its
                       // disk fails; dying lets systemd restart it and recover
                       // from what is on disk.
                       if (!r) {
                           spdlog::critical("Failed to save task {}: {}", unit, r.error().message);
                           std::abort();
                       }
                       if (durable) durable();
                   });
}

void TaskManager::unpersist(const TaskRecord& record, std::function<void()> gone) {
    ::unlink(store_.exitFile(record.unit).c_str());
    ::unlink(store_.abortedMark(record.unit).c_str());
    ::unlink(store_.processSpecFile(record.unit).c_str());
    // In order with the record's pending writes, which must not bring it back.
    writer_->remove(store_.recordFile(record.unit), [unit = record.unit, gone = std::move(gone)](Result<void> r) {
        if (!r) spdlog::error("Failed to remove the record of {}: {}", unit, r.error().message);
        if (gone) gone();
    });
}

Result<void> TaskManager::recover() {
    if (auto r = store_.prepare(); !r) return r.error().context("prepare " + config_.stateDir);
    if (auto r = spool_.prepareDir(); !r) return r.error().context("prepare " + config_.logSpoolDir);

    // Shims are our children while we run; SIGCHLD tells us to reap them.
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    signalFd_ = ::signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (signalFd_ < 0) return common::errnoError("signalfd", errno);
    signalWatch_ = loop_.addFd(signalFd_, POLLIN, [this](short) { reapChildren(); });

    // Watch before scanning, so an exit written during the scan is seen.
    inotifyFd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (inotifyFd_ < 0) return common::errnoError("inotify_init1", errno);
    if (::inotify_add_watch(inotifyFd_, store_.exitsDir().c_str(), IN_MOVED_TO) < 0)
        return common::errnoError("watch " + store_.exitsDir(), errno);
    // The streamer deletes a task's description once it has drained it:
    // then the manager's hold on the fifos can go.
    spoolWd_ = ::inotify_add_watch(inotifyFd_, config_.logSpoolDir.c_str(), IN_DELETE);
    if (spoolWd_ < 0) return common::errnoError("watch " + config_.logSpoolDir, errno);
    inotifyWatch_ = loop_.addFd(inotifyFd_, POLLIN, [this](short) { onExitsDirEvent(); });

    auto records = store_.loadAll();
    if (!records) return records.error();
    // The fifo holds a manager before 0.2 put in systemd's fd store.
    auto stored = common::takeStoredFds();
    recovering_ = true;
    size_t readopted = 0;
    std::vector<Key> neverRan;
    for (auto& rec : *records) {
        auto entry = std::make_unique<Entry>();
        entry->record = std::move(rec);
        entry->record.objectPath = scope::taskObjectPath(objectPrefix_, entry->record.unit);
        auto& e = *entry;
        auto& r = e.record;
        const auto unit = r.unit;
        insert(std::move(entry));
        // A task an older manager started: its shim holds nothing, so the
        // manager's stored hold is kept until the streamer has drained it.
        if (auto hold = spool_.readopt(unit, stored)) e.logHold = std::move(*hold);
        if (r.finished()) continue;
        if (::access(store_.exitFile(unit).c_str(), F_OK) == 0) {
            collectExit(e);
        } else if (shimAlive(r)) {
            ++readopted;
            if (r.state == TaskState::Stopping && r.killDeadlineUs != 0) {
                // A stop was under way: its grace runs on from where it was.
                armKillTimer(e);
                spdlog::debug("Re-adopted task {} (pid {}, unit {}) while it stops; kill in {} ms",
                             taskLabel(r.allocId, r.name), r.pid, unit,
                             r.killDeadlineUs > bootUs() ? (r.killDeadlineUs - bootUs()) / 1000 : 0);
            } else {
                r.state = TaskState::Running;
                // Debug, with one summary line below: a line per task into
                // journald held a restart for milliseconds per task.
                spdlog::debug("Re-adopted task {} (pid {}, unit {})", taskLabel(r.allocId, r.name), r.pid, unit);
            }
            if (r.reservedCores)
                if (auto ok = cpus_.restore(unit, r.cpus); !ok)
                    spdlog::error("Failed to restore the cores of {}: {}", unit, ok.error().message);
            if (shimHome_)
                if (auto moved = shimHome_->adopt(r.shimPid); !moved)
                    spdlog::warn("Shim {} of {} stays where it is: {}", r.shimPid, unit, moved.error().message);
        } else if (scopeHasProcesses(r)) {
            // The shim was killed but the task was not: it runs on, can be
            // stopped, and is never reported ended while it has processes.
            if (r.state != TaskState::Stopping) r.state = TaskState::Running;
            if (r.state == TaskState::Stopping && r.killDeadlineUs != 0) armKillTimer(e);
            if (r.reservedCores)
                if (auto ok = cpus_.restore(unit, r.cpus); !ok)
                    spdlog::error("Failed to restore the cores of {}: {}", unit, ok.error().message);
            watchOrphan(e);
        } else if (r.shimPid > 0 && store_.abortedShim(unit) == r.shimPid) {
            // Its start was cut off (the manager before us died mid-start)
            // and its shim left without running it: the caller was never
            // told it started, so it goes, and asking again works. Once
            // every record is in: its allocation's dirs go only with the
            // allocation's last task.
            neverRan.push_back(Key{r.allocId, r.name});
        } else {
            // Neither an exit record nor a living shim: the node rebooted or
            // the shim was killed. Say so rather than invent an exit code.
            r.state = TaskState::Lost;
            r.lostReason = "its shim is gone and left no exit record";
            r.exit.finishedAtUs = nowUs();
            r.reservedCores = false;
            spool_.markExited(unit);
            spdlog::warn("Task {} is lost: its shim {} is gone and left no exit record",
                         taskLabel(r.allocId, r.name), r.shimPid);
            persist(r);
        }
    }
    if (readopted) spdlog::info("Re-adopted {} running tasks of {} recorded", readopted, records->size());
    for (const auto& key : neverRan) {
        const auto r = tasks_.at(key)->record;
        spool_.remove(r.unit);
        removeDirsOf(r);
        unpersist(r);
        (void)erase(r);
    }
    if (!neverRan.empty())
        spdlog::info("Removed {} tasks whose start the previous manager did not finish: they never ran",
                     neverRan.size());
    // Task dirs of starts cut off before their record was written.
    std::vector<std::pair<std::string, std::string>> owned;
    for (const auto& [key, e] : tasks_) owned.push_back(key);
    if (auto n = sweepUnownedTaskDirs(config_.stateDir, owned))
        spdlog::info("Removed the dirs of {} tasks or allocations no task record names (starts cut off before "
                     "their record was written)",
                     n);
    // Marks of starts that failed while their manager lived (it removed
    // the task then) or whose task is gone: nothing reads them any more.
    for (const auto& unit : store_.abortedMarks())
        if (!units_.count(unit)) ::unlink(store_.abortedMark(unit).c_str());
    // Holds of tasks no record names any more: not ours to keep.
    for (auto& [name, fd] : stored) common::unstoreFd(name);
    // Reservations that ended while we were away have left cores the
    // shared tasks should have again.
    recovering_ = false;
    applySharedPool();
    return {};
}

void TaskManager::attach(TaskEvents& events) {
    events_ = &events;
    for (auto& [key, e] : tasks_) {
        auto& r = e->record;
        if (r.finished() && !r.exitReported) {
            events_->taskExited(r);
            r.exitReported = true;
            persist(r);
        }
    }
}

bool TaskManager::shimAlive(const TaskRecord& r) const {
    if (r.shimPid <= 0) return false;
    // The shim's command line names its exit file, which names the unit:
    // a recycled PID cannot pass this check.
    auto cmdline = common::readFile("/proc/" + std::to_string(r.shimPid) + "/cmdline");
    if (!cmdline) return false;
    return cmdline->find(store_.exitFile(r.unit) + '\0') != std::string::npos;
}

Result<TaskManager::Entry*> TaskManager::find(const std::string& allocId, const std::string& task) const {
    auto it = tasks_.find(Key{allocId, task});
    if (it != tasks_.end()) return it->second.get();
    // A name no unit could have gets the more useful error.
    if (auto unit = taskUnitName(allocId, task); !unit) return unit.error();
    return makeError("NoSuchTask", "no task " + taskLabel(allocId, task));
}

TaskManager::Entry* TaskManager::byUnit(const std::string& unit) const {
    auto it = units_.find(unit);
    if (it == units_.end()) return nullptr;
    return tasks_.at(it->second).get();
}

void TaskManager::insert(std::unique_ptr<Entry> entry) {
    const auto& r = entry->record;
    Key key{r.allocId, r.name};
    units_[r.unit] = key;
    tasks_[std::move(key)] = std::move(entry);
}

TaskManager::Queue TaskManager::erase(const TaskRecord& record) {
    const Key key{record.allocId, record.name};
    auto it = tasks_.find(key);
    if (it == tasks_.end()) return {};
    auto& e = *it->second;
    if (e.killTimer) loop_.cancelTimer(e.killTimer);
    if (e.exitRetryTimer) loop_.cancelTimer(e.exitRetryTimer);
    if (e.orphanTimer) loop_.cancelTimer(e.orphanTimer);
    auto queued = std::move(e.queue);
    units_.erase(record.unit);
    tasks_.erase(it);
    return queued;
}

void TaskManager::runOrphans(Queue queued) {
    // Operations that waited for an erased task find it gone and say so.
    for (auto& op : queued) op();
}

void TaskManager::submit(const Key& key, std::function<void()> op) {
    tasks_.at(key)->queue.push_back(std::move(op));
    runNext(key);
}

void TaskManager::runNext(const Key& key) {
    auto it = tasks_.find(key);
    if (it == tasks_.end()) return;
    auto& e = *it->second;
    if (e.busy || e.queue.empty()) return;
    auto op = std::move(e.queue.front());
    e.queue.pop_front();
    e.busy = true;
    op();
}

void TaskManager::operationDone(const Key& key) {
    auto it = tasks_.find(key);
    if (it == tasks_.end()) return;
    it->second->busy = false;
    runNext(key);
}

void TaskManager::start(const std::string& allocId, const std::string& task, const std::string& specJson,
                        StartDone done) {
    if (draining_)
        return done(makeError("ShuttingDown", "the manager is stopping; task " + taskLabel(allocId, task) +
                                                  " was not started (nothing of it was made): ask again once it is back"));
    auto unit = taskUnitName(allocId, task);
    if (!unit) return done(unit.error());
    if (tasks_.count(Key{allocId, task}))
        return done(makeError("TaskExists", "task " + taskLabel(allocId, task) + " already exists"));
    if (const auto* other = byUnit(*unit))
        return done(makeError("UnitNameCollision", "task " + taskLabel(allocId, task) + " would run in unit " + *unit +
                                                       ", which belongs to task " +
                                                       taskLabel(other->record.allocId, other->record.name)));
    // Refused before anything exists, with the numbers, rather than
    // failing half-way with EMFILE.
    // Starts admitted whose descriptors are not open yet (waiting for
    // their turn on the loop or on the start worker) count as if they were.
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
    rec.specJson = specJson;
    rec.state = TaskState::Starting;
    entry.busy = true;
    insert(std::move(created));
    const Key key{allocId, task};
    auto state = std::make_shared<StartState>();
    state->done = std::move(done);
    state->clock.onLoop("admit");
    // The rest (the spec parsed, users and paths resolved, task dirs made,
    // cores assigned: milliseconds under emulation) on a later turn of the
    // loop: a burst of starts is admitted at once, and the reads queued
    // behind it on the bus wait for no start's work but the one under way.
    loop_.post([this, alive = std::weak_ptr<int>(lifetime_), key, state] {
        if (alive.expired()) return;
        state->clock.waited("turn");
        continueStart(key, state);
    });
}

size_t TaskManager::startsUnderWay() const {
    size_t n = 0;
    for (const auto& [key, e] : tasks_)
        if (e->record.state == TaskState::Starting) ++n;
    return n;
}

void TaskManager::drain(std::chrono::milliseconds bound, std::function<void()> drained) {
    draining_ = true;
    drainDeadline_ = common::EventLoop::Clock::now() + bound;
    drained_ = std::move(drained);
    if (const auto left = startsUnderWay())
        spdlog::info("Stopping: waiting for {} starts under way; new starts are refused", left);
    checkDrained();
}

void TaskManager::checkDrained() {
    // A look every 50 ms: a start's end has several paths, and this runs
    // once per daemon lifetime.
    const auto left = startsUnderWay();
    if (left > 0 && common::EventLoop::Clock::now() < drainDeadline_) {
        loop_.addTimer(common::EventLoop::Clock::now() + std::chrono::milliseconds(50),
                       [this, alive = std::weak_ptr<int>(lifetime_)] {
                           if (!alive.expired()) checkDrained();
                       });
        return;
    }
    if (left)
        spdlog::warn("{} starts still under way at the end of the drain; exiting: their shims leave without "
                     "running them, and the next start removes them",
                     left);
    drained_();
}

void TaskManager::continueStart(const Key& key, const std::shared_ptr<StartState>& state) {
    // Still there: a busy entry is erased only by its own operation.
    auto& rec = tasks_.at(key)->record;
    const auto& allocId = key.first;
    const auto& task = key.second;
    const auto unit = rec.unit;
    auto& clock = state->clock;
    // Whatever fails before systemd is asked leaves nothing behind.
    auto fail = [&](common::Error error) {
        --preparing_;
        if (state->reserved) cpus_.release(rec.unit);
        ::unlink(store_.processSpecFile(rec.unit).c_str());
        removeDirsOf(rec);
        auto finished = std::move(state->done);
        auto queued = erase(rec);
        finished(std::move(error));
        runOrphans(std::move(queued));
    };

    auto spec = parseTaskSpec(rec.specJson);
    if (!spec) return fail(spec.error());
    if (!spec->isolationGiven && config_.isolation.defaultIsolated) spec->isolation.filesystem = true;
    // The node's limit, not systemd's 15% of pid_max: one fork bomb must not
    // take the process table and the CPUs from every other task.
    if (!spec->resources.pidsMax && config_.defaultPidsMax) spec->resources.pidsMax = config_.defaultPidsMax;
    if (auto r = resolveTaskSpec(*spec); !r) return fail(r.error());
    clock.onLoop("spec");
    if (startHook_)
        if (auto r = startHook_(allocId, task, *spec); !r) return fail(r.error());
    clock.onLoop("hook");
    if (auto r = prepareTaskDirs(spec->isolation, config_.isolation, config_.stateDir, allocId, task); !r)
        return fail(r.error());
    if (auto r = resolveRootIdentity(*spec); !r) return fail(r.error());
    auto cpus = assignCpus(unit, spec->resources);
    if (!cpus) return fail(cpus.error());
    spec->resources.allowedCpus = *cpus;
    state->reserved = spec->resources.cores.value_or(0) > 0 || !spec->resources.cpuset.empty();
    // Known from here on, so that other starts count this one right.
    rec.cpus = *cpus;
    rec.reservedCores = state->reserved;
    clock.onLoop("dirs+cpus");

    const auto logDir = store_.logDir(allocId);
    LaunchPaths paths;
    paths.exitFile = store_.exitFile(unit);
    paths.processSpec = store_.processSpecFile(unit);
    rec.processSpec = paths.processSpec;
    if (shimHome_) paths.joinCgroups = shimHome_->procsFiles();
    if (spec->joinAllocNetwork) {
        auto netns = netnsOf_ ? netnsOf_(allocId)
                              : common::Result<std::string>(makeError("NoSuchNetwork", "this manager has no networks"));
        if (!netns) return fail(netns.error().context("task " + taskLabel(allocId, task)));
        paths.netns = *netns;
    }
    std::optional<LogSettings> spooled;
    if (spec->logs && !config_.streamer) {
        const auto base = logDir + "/" + scope::escapeComponent(task);
        paths.stdoutFile = base + ".stdout.0";
        paths.stderrFile = base + ".stderr.0";
    } else if (spec->logs) {
        spooled = LogSettings{logDir, spec->logMaxFiles ? spec->logMaxFiles : config_.logMaxFiles,
                              spec->logMaxFileSizeMb ? spec->logMaxFileSizeMb : config_.logMaxFileSizeMb};
        paths.stdoutFile = spool_.stdoutFifo(unit);
        paths.stderrFile = spool_.stderrFifo(unit);
        paths.releaseFifo = spool_.releaseFifo(unit);
    } else {
        paths.stdoutFile = spec->stdoutPath;
        paths.stderrFile = spec->stderrPath;
    }
    state->properties = baseProperties(config_, allocId, task);
    for (auto& p : scope::resourceProperties(spec->resources)) state->properties.push_back(std::move(p));
    if (spec->isolation.filesystem) addDeviceProperties(state->properties);
    clock.onLoop("paths");

    // The rest makes files and a process: mkdir, mkfifo, the spool
    // description, posix_spawn (whose vfork holds the calling thread until
    // the shim has exec'd: milliseconds under emulation). On the loop, every
    // read queued behind a burst of starts waited for all of theirs, so it
    // runs on the start worker, one start after another, and the start goes
    // on from the loop once the shim exists. Still counted in the
    // descriptor budget meanwhile (preparing_).
    spawner_->submit([this, key, state, spec = std::move(*spec), paths = std::move(paths), spooled, logDir, unit,
                      allocId, task]() -> std::function<void()> {
        auto prepared = prepareLaunch(spec, paths, spooled, logDir, unit, allocId, task);
        return [this, key, state, prepared = std::make_shared<decltype(prepared)>(std::move(prepared))]() mutable {
            --preparing_;
            state->clock.waited("prepare");
            // Erased meanwhile? Only its own operation erases a busy entry.
            if (!*prepared) return failStart(key, *state, withFdNumbers(prepared->error()));
            state->launch = std::move(**prepared);
            // The shim's "pid N" comes through the loop: no start ever makes
            // the manager wait for a process to be scheduled.
            watchShim(key, state);
            state->clock.onLoop("watch");
        };
    });
    clock.onLoop("submit");
}

Result<Launch> TaskManager::prepareLaunch(const TaskSpec& spec, const LaunchPaths& paths,
                                          const std::optional<LogSettings>& spooled, const std::string& logDir,
                                          const std::string& unit, const std::string& allocId,
                                          const std::string& task) const {
    // Runs on the start worker: only const members (paths, the spool's
    // directory, the shim's path) and the filesystem; nothing of the loop's.
    // Only a task whose output is kept gets the directory: the streamer
    // removes it with the allocation's last task it knows, and never learns
    // of a task with logs off.
    if (spec.logs)
        if (auto r = common::makeDirs(logDir, common::kPrivateDirMode); !r)
            return r.error().context("create log directory");
    ::unlink(paths.exitFile.c_str());
    ::unlink(store_.abortedMark(unit).c_str());  // a cut-off start's of this name
    if (spooled)
        if (auto added = spool_.add(unit, allocId, task, *spooled); !added)
            return added.error().context("prepare logs");
    auto launch = spawnShim(config_.shimPath, spec, paths);
    if (!launch && spooled) spool_.remove(unit);
    return launch;
}

void TaskManager::watchShim(const Key& key, const std::shared_ptr<StartState>& state) {
    state->watch = loop_.addFd(state->launch.report.get(), POLLIN, [this, key, state](short) {
        auto line = takeReportLine(state->launch.report.get(), state->launch.pending);
        if (line && !*line) return;  // the rest of the line is still on its way
        loop_.removeFd(state->watch);
        state->watch = 0;
        if (!state->released) {
            state->clock.waited("shim pid");
            auto r = line ? acceptPid(state->launch, **line) : Result<void>(line.error().context("start task"));
            if (!r) return failStart(key, *state, withFdNumbers(r.error()));
            auto& rec = tasks_.at(key)->record;
            rec.pid = state->launch.taskPid;
            rec.shimPid = state->launch.shimPid;
            rec.startedAtUs = nowUs();
            // The record goes to disk while systemd makes the scope, not
            // after: a start waited for the two after another (a journal
            // commit under emulation is tens of ms). The cgroup is where
            // systemd puts a scope of this slice; finishStart checks it
            // against the kernel's word and writes again if they differ. On
            // disk as running before the task runs its first instruction:
            // a crash from here on finds it (a crash before the scope exists
            // finds its shim gone, the task never run: lost, with the reason).
            rec.cgroup = scopeCgroup(config_.slice, rec.unit);
            writeStartRecord(key, state);
            systemd_.startScopeAsync(rec.unit, {static_cast<uint32_t>(rec.pid)}, state->properties,
                                     [this, key, state](Result<void> r) { finishStart(key, state, std::move(r)); });
            state->clock.onLoop("record + systemd call");
            return;
        }
        state->clock.waited("exec report");
        auto r = line ? acceptRelease(**line) : Result<void>(line.error().context("release task"));
        state->launch.report.reset();
        completeStart(key, *state, std::move(r));
    });
}

void TaskManager::failStart(const Key& key, StartState& st, common::Error error) {
    auto& rec = tasks_.at(key)->record;
    const auto unit = rec.unit;
    if (st.watch) loop_.removeFd(st.watch);
    st.watch = 0;
    // The shim sees its go pipe close and exits without running the task.
    abortTask(st.launch);
    spool_.remove(unit);
    // The launcher saved the process spec before the shim was spawned.
    ::unlink(store_.processSpecFile(unit).c_str());
    if (st.reserved) cpus_.release(unit);
    removeDirsOf(rec);
    auto queued = erase(rec);
    auto done = std::move(st.done);
    if (!st.recordAsked) {
        done(std::move(error));
        return runOrphans(std::move(queued));
    }
    // Its record went to disk beside systemd's job: the caller hears of the
    // failure once it is gone again, so nothing of the start is left.
    TaskRecord gone;
    gone.unit = unit;
    unpersist(gone, [this, error = std::move(error), done = std::move(done),
                     queued = std::make_shared<Queue>(std::move(queued))]() mutable {
        done(std::move(error));
        runOrphans(std::move(*queued));
    });
}

void TaskManager::writeStartRecord(const Key& key, const std::shared_ptr<StartState>& state) {
    auto onDisk = tasks_.at(key)->record;
    onDisk.state = TaskState::Running;
    state->recordAsked = true;
    ++state->writesPending;
    persist(onDisk, [this, key, state] {
        --state->writesPending;
        releaseWhenReady(key, state);
    });
}

void TaskManager::releaseWhenReady(const Key& key, const std::shared_ptr<StartState>& state) {
    // Both the scope (systemd's job done) and the record on disk, once.
    if (!state->jobDone || state->writesPending > 0 || state->released) return;
    state->clock.waited("record on disk");
    if (auto r = sendGo(state->launch); !r) {
        state->launch.report.reset();
        return completeStart(key, *state, std::move(r));
    }
    state->released = true;
    watchShim(key, state);
    state->clock.onLoop("go");
}

void TaskManager::finishStart(const Key& key, const std::shared_ptr<StartState>& state, Result<void> started) {
    // Still there: a busy entry is erased only by its own operation.
    auto& entry = *tasks_.at(key);
    auto& rec = entry.record;
    state->clock.waited("systemd job");
    if (!started) return failStart(key, *state, started.error().context("start task " + taskLabel(rec.allocId, rec.name)));

    // The kernel's word on where systemd put the task: no round trip. The
    // record written meanwhile has the cgroup a scope of the slice gets;
    // should systemd have put it elsewhere, it is written again first.
    state->jobDone = true;
    const auto actual = cgroupOf(rec.pid);
    if (!actual.empty() && actual != rec.cgroup) {
        spdlog::debug("Task {} is in {}, not in {}: its record is written again", rec.unit, actual, rec.cgroup);
        rec.cgroup = actual;
        writeStartRecord(key, state);
    }
    state->clock.onLoop("cgroup read");
    // In memory it stays "starting" until the shim says the command runs.
    releaseWhenReady(key, state);
}

void TaskManager::completeStart(const Key& key, StartState& st, Result<void> released) {
    auto& entry = *tasks_.at(key);
    auto& rec = entry.record;
    const auto unit = rec.unit;
    const auto label = taskLabel(rec.allocId, rec.name);
    if (!released) {
        // The shim records the failed exec; wait for it so that nothing of
        // this start remains, as the caller is told it failed.
        ::waitpid(st.launch.shimPid, nullptr, 0);
        spool_.remove(unit);
        if (st.reserved) cpus_.release(unit);
        removeDirsOf(rec);
        auto error = released.error().context("start task " + label);
        auto done = std::move(st.done);
        auto queued = std::make_shared<Queue>();
        // The caller hears of the failure once its record is off the disk
        // too: nothing of the start is left when it is told.
        unpersist(rec, [this, unit, error, done, queued]() mutable {
            // The scope is empty now and systemd collects it by itself; a
            // failed stop is the caller's to know, not only the journal's.
            systemd_.stopUnitAsync(unit, [this, error, done, queued](Result<void> stopped) mutable {
                // NoSuchUnit: systemd has already collected the empty scope.
                if (!stopped && stopped.error().name != "NoSuchUnit")
                    error.message +=
                        "; its scope was not stopped (systemd removes it once empty): " + stopped.error().message;
                done(std::move(error));
                runOrphans(std::move(*queued));
            });
        });
        *queued = erase(rec);
        return;
    }

    rec.state = TaskState::Running;
    // Debug, not info: systemd already logs the scope's start with its
    // description, which names the task ("Started taskscope task a/t"), and
    // a line per start into a journald busy with a burst of starts held the
    // loop for ms (bench/profile-start.sh: "log").
    spdlog::debug("Started task {} as pid {} in {}", label, rec.pid, unit);
    st.clock.onLoop("log");
    if (events_) events_->taskAdded(rec);
    st.clock.onLoop("publish");
    st.done(&rec);
    st.clock.onLoop("reply");
    // A task that ran and ended before its start was complete: its exit
    // record's event was left for now.
    if (::access(store_.exitFile(unit).c_str(), F_OK) == 0) collectExit(entry);
    operationDone(key);
    // A reservation shrinks the pool; a shared start may have taken a pool
    // that changed meanwhile.
    applySharedPool();
    // (The requests that waited for the start may have removed it.)
    if (auto it = tasks_.find(key); it != tasks_.end()) {
        auto& e = *it->second;
        if (unified_ && !e.record.finished() && !e.record.reservedCores && !e.poolQueued && !cpus_.usable().empty() &&
            e.record.cpus != cpus_.shared()) {
            e.poolQueued = true;
            submit(key, [this, key] { applyPool(key); });
        }
    }
    st.clock.onLoop("after");
    // The summary is formatted only when it is logged: not on every start.
    if (spdlog::should_log(spdlog::level::debug)) spdlog::debug("Start of {} took {}", label, st.clock.summary());
}

Result<void> TaskManager::signalMain(const TaskRecord& r, int sig) const {
    // Only signal the PID while it is still the task's: it must sit in the
    // task's scope, which a recycled PID never does.
    auto cg = common::readFile("/proc/" + std::to_string(r.pid) + "/cgroup");
    if (!cg || !scope::inTaskScope(*cg, config_.slice, r.unit))
        return makeError("NotRunning", "task " + taskLabel(r.allocId, r.name) + " has no running main process");
    if (::kill(r.pid, sig) < 0) return common::errnoError("signal task " + taskLabel(r.allocId, r.name), errno);
    return {};
}

Result<void> TaskManager::signal(const std::string& allocId, const std::string& task, const std::string& text) {
    auto e = find(allocId, task);
    if (!e) return e.error();
    auto sig = common::parseSignal(text);
    if (!sig) return sig.error();
    auto& r = (*e)->record;
    if (r.finished()) return makeError("NotRunning", "task " + taskLabel(allocId, task) + " has exited");
    return signalMain(r, *sig);
}

void TaskManager::stop(const std::string& allocId, const std::string& task, const std::string& text, int64_t graceMs,
                       Done done) {
    auto found = find(allocId, task);
    if (!found) return done(found.error());
    const Key key{allocId, task};
    submit(key, [this, key, text, graceMs, done] {
        auto e = find(key.first, key.second);
        if (!e) return done(e.error());
        done(stopNow(**e, text, graceMs));
        operationDone(key);
    });
}

Result<void> TaskManager::stopNow(Entry& e, const std::string& text, int64_t graceMs) {
    const auto& allocId = e.record.allocId;
    const auto& task = e.record.name;
    auto& r = e.record;
    if (r.finished()) return makeError("NotRunning", "task " + taskLabel(allocId, task) + " has exited");
    auto spec = parseTaskSpec(r.specJson);
    if (!spec) return spec.error();
    int sig = spec->killSignal;
    if (!text.empty()) {
        auto parsed = common::parseSignal(text);
        if (!parsed) return parsed.error();
        sig = *parsed;
    }
    const int64_t grace = graceMs < 0 ? spec->killTimeoutMs : graceMs;
    if (r.state != TaskState::Stopping) {
        r.state = TaskState::Stopping;
        if (events_) events_->taskChanged(r);
    }
    spdlog::info("Stopping task {} with {} and {} ms grace", taskLabel(allocId, task), common::signalName(sig), grace);
    if (grace == 0) {
        forceKill(e);
        return {};
    }
    // The deadline is on disk before the signal goes out: a manager that
    // dies now still kills the task on time after its restart.
    r.killDeadlineUs = bootUs() + static_cast<uint64_t>(grace) * 1000u;
    persist(r);
    if (auto s = signalMain(r, sig); !s) spdlog::debug("Signal to {} not sent: {}", r.unit, s.error().message);
    armKillTimer(e);
    return {};
}

void TaskManager::armKillTimer(Entry& e) {
    if (e.killTimer) loop_.cancelTimer(e.killTimer);
    const uint64_t now = bootUs();
    const uint64_t left = e.record.killDeadlineUs > now ? e.record.killDeadlineUs - now : 0;
    Key key{e.record.allocId, e.record.name};
    e.killTimer = loop_.addTimer(common::EventLoop::Clock::now() + std::chrono::microseconds(left), [this, key] {
        auto it = tasks_.find(key);
        if (it == tasks_.end()) return;
        it->second->killTimer = 0;
        if (!it->second->record.finished()) forceKill(*it->second);
    });
}

void TaskManager::forceKill(Entry& e) {
    const auto& unit = e.record.unit;
    if (unified_) {
        // The kernel kills every process of the cgroup at once, including
        // any that fork meanwhile. Asking systemd instead (FreezeUnit, then
        // KillUnit) fails exactly when it matters: a fork bomb keeps PID 1
        // busy reaping orphans until it stops answering (seen in the test
        // bed with systemd 252). cgroup.kill is an action, not a setting
        // systemd manages or could undo.
        // Only ever the task's own scope (issue 32): a record's cgroup that
        // is not it ("/" read under an unexpected layout) goes to systemd.
        const auto killFile = scope::taskScopeFile(cgroupRoot_, e.record.cgroup, config_.slice, unit, "cgroup.kill");
        if (!killFile) {
            spdlog::warn("Not writing cgroup.kill for {}: {}; asking systemd instead", unit, killFile.error().message);
        } else {
            common::UniqueFd fd(::open(killFile->c_str(), O_WRONLY | O_CLOEXEC));
            if (!fd && errno == ENOENT) return;  // the scope is gone, and all its processes with it
            if (fd && ::write(fd.get(), "1", 1) == 1) return;
            spdlog::warn("Failed to write {}: {}, asking systemd instead", *killFile, std::strerror(errno));
        }
    }
    // cgroup v1: freeze through systemd where it can (frozen processes
    // cannot fork), SIGKILL everything, thaw so the kill is delivered. Each
    // step waits for systemd's reply on the loop, never in it: a fork bomb
    // can keep PID 1 busy for seconds, and reads must not wait for that.
    systemd_.freezeUnitAsync(unit, [this, unit](Result<void> frozen) {
        if (!frozen) spdlog::debug("Freeze {} failed: {}, killing unfrozen", unit, frozen.error().message);
        const bool thaw = static_cast<bool>(frozen);
        systemd_.killUnitAsync(unit, "all", SIGKILL, [this, unit, thaw](Result<void> k) {
            if (!k && k.error().name != "NoSuchUnit") spdlog::warn("Failed to kill {}: {}", unit, k.error().message);
            if (!thaw) return;
            systemd_.thawUnitAsync(unit, [unit](Result<void> t) {
                if (!t) spdlog::debug("Thaw {}: {}", unit, t.error().message);
            });
        });
    });
}

void TaskManager::onExitsDirEvent() {
    alignas(inotify_event) char buf[4096];
    for (;;) {
        const ssize_t n = ::read(inotifyFd_, buf, sizeof buf);
        if (n <= 0) break;
        for (ssize_t off = 0; off < n;) {
            const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
            off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
            if (ev->len == 0) continue;
            std::string name = ev->name;
            if (ev->wd == spoolWd_) {
                if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) {
                    const auto unit = name.substr(0, name.size() - 5);
                    // Only a task an older manager started has a hold here.
                    if (auto* e = byUnit(unit); e && (e->logHold.first || e->logHold.second)) {
                        e->logHold = {};
                        spool_.release(unit);
                    }
                }
                continue;
            }
            // A starting task's exit is collected when its start completes.
            if (auto* e = byUnit(name); e && !e->record.finished() && e->record.state != TaskState::Starting)
                collectExit(*e);
        }
    }
}

void TaskManager::collectExit(Entry& e) {
    auto& r = e.record;
    if (e.exitRetryTimer) {
        loop_.cancelTimer(e.exitRetryTimer);
        e.exitRetryTimer = 0;
    }
    auto status = [&]() -> Result<ExitStatus> {
        auto text = common::readFile(store_.exitFile(r.unit));
        if (!text) return text.error();
        return parseExitFile(*text);
    }();
    if (!status) {
        // The shim replaces its record atomically, so a failed read is the
        // disk or a lack of descriptors: worth a few retries. After those
        // the task has ended (it left a record) in an unknown way: it is
        // marked lost with the reason, never left "running" forever.
        if (++e.exitReadFailures < kExitReadAttempts) {
            const auto delay = kExitReadRetryDelay * (1 << (e.exitReadFailures - 1));
            spdlog::warn("Failed to read the exit record of {} (attempt {} of {}): {}, retrying in {} ms", r.unit,
                         e.exitReadFailures, kExitReadAttempts, status.error().message, delay.count());
            Key key{r.allocId, r.name};
            e.exitRetryTimer = loop_.addTimer(common::EventLoop::Clock::now() + delay, [this, key] {
                auto it = tasks_.find(key);
                if (it == tasks_.end()) return;
                it->second->exitRetryTimer = 0;
                if (!it->second->record.finished()) collectExit(*it->second);
            });
            return;
        }
        spdlog::error("Task {} is lost: its exit record could not be read {} times: {}", taskLabel(r.allocId, r.name),
                      kExitReadAttempts, status.error().message);
        r.state = TaskState::Lost;
        r.lostReason = "its exit record could not be read: " + status.error().message;
        r.exit = ExitStatus{};
        r.exit.finishedAtUs = nowUs();
        finish(e);
        return;
    }
    r.exit = *status;
    r.state = TaskState::Exited;
    spdlog::info("Task {} exited: code {}, signal {}{}", taskLabel(r.allocId, r.name), r.exit.exitCode,
                 r.exit.signal, r.exit.oomKilled ? ", OOM killed" : "");
    finish(e);
}

void TaskManager::finish(Entry& e) {
    auto& r = e.record;
    e.exitReadFailures = 0;
    r.pid = 0;
    r.killDeadlineUs = 0;
    releaseCpus(r);
    if (e.orphanTimer) {
        loop_.cancelTimer(e.orphanTimer);
        e.orphanTimer = 0;
    }
    if (e.killTimer) {
        loop_.cancelTimer(e.killTimer);
        e.killTimer = 0;
    }
    persist(r);
    spool_.markExited(r.unit);
    // The main process is gone; whatever it left behind in the scope goes
    // with it, as when Nomad's executor ends a task.
    if (unified_) {
        forceKill(e);
    } else if (auto st = systemd_.unitState(r.unit); st && st->active == "active") {
        forceKill(e);
    }
    if (events_) {
        events_->taskChanged(r);
        events_->taskExited(r);
        r.exitReported = true;
        persist(r);
    }
}

void TaskManager::reapChildren() {
    signalfd_siginfo info;
    while (::read(signalFd_, &info, sizeof info) == sizeof info) {
    }
    // Shims are the manager's children until it restarts; after that PID 1
    // reaps them and recovery (or the exits directory) notices. Everything
    // reaped in this wakeup is matched in one pass over the tasks: a stop of
    // every task on a full node reaps thousands of shims, and a pass per
    // shim made that quadratic.
    std::set<pid_t> reaped;
    pid_t pid;
    while ((pid = ::waitpid(-1, nullptr, WNOHANG)) > 0) reaped.insert(pid);
    if (reaped.empty()) return;
    // A starting task's shim is watched by its start instead.
    const auto watched = [](const TaskRecord& r) { return !r.finished() && r.state != TaskState::Starting; };
    std::vector<std::pair<Key, pid_t>> gone;
    for (auto& [key, e] : tasks_)
        if (reaped.count(e->record.shimPid) && watched(e->record)) gone.emplace_back(key, e->record.shimPid);
    // onShimGone may finish a task and run what waited for it, which can
    // remove or restart other tasks: each is looked up again first.
    for (const auto& [key, shim] : gone) {
        auto it = tasks_.find(key);
        if (it == tasks_.end()) continue;
        auto& e = *it->second;
        if (e.record.shimPid == shim && watched(e.record)) onShimGone(e);
    }
}

void TaskManager::onShimGone(Entry& e) {
    auto& r = e.record;
    // A shim writes the record before it exits; its inotify event may come
    // after the SIGCHLD.
    if (::access(store_.exitFile(r.unit).c_str(), F_OK) == 0) return collectExit(e);
    if (e.orphanTimer) return;
    spdlog::error("The shim {} of task {} died without an exit record; the task stays running while its scope {} "
                  "has processes (no exit code can be known)",
                  r.shimPid, taskLabel(r.allocId, r.name), r.unit);
    watchOrphan(e);
}

std::optional<std::string> TaskManager::cgroupFile(const std::string& cgroup, const std::string& hierarchy,
                                                    const std::string& file) const {
    // A record's cgroup came from /proc or from disk: only a path that
    // stays inside the tree is ever joined to the root.
    if (cgroup.empty()) return std::nullopt;
    const auto base = cgroupRoot_ + (hierarchy.empty() ? "" : "/" + hierarchy);
    // A process left in the root cgroup (a host whose init is not systemd,
    // as under the unit tier): the root's own files (it has no cgroup.kill).
    if (cgroup == "/") return base + "/" + file;
    auto path = scope::CgroupPath::parse(cgroup);
    if (!path) {
        spdlog::warn("Ignoring the cgroup '{}' of a task record: {}", cgroup, path.error().message);
        return std::nullopt;
    }
    return base + path->str() + "/" + file;
}

bool TaskManager::scopeHasProcesses(const TaskRecord& r) const {
    // cgroup v1: the hierarchy systemd tracks processes in.
    const auto procs = cgroupFile(r.cgroup, unified_ ? "" : "systemd", "cgroup.procs");
    if (!procs) return false;
    auto text = common::readFile(*procs);
    return text && text->find_first_of("0123456789") != std::string::npos;
}

void TaskManager::watchOrphan(Entry& e) {
    const Key key{e.record.allocId, e.record.name};
    // One look a second: a task without a shim is an accident, and rare.
    e.orphanTimer = loop_.addTimer(common::EventLoop::Clock::now() + std::chrono::seconds(1), [this, key] {
        auto it = tasks_.find(key);
        if (it == tasks_.end()) return;
        auto& entry = *it->second;
        entry.orphanTimer = 0;
        auto& r = entry.record;
        if (r.finished()) return;
        if (::access(store_.exitFile(r.unit).c_str(), F_OK) == 0) return collectExit(entry);
        if (scopeHasProcesses(r)) return watchOrphan(entry);
        spdlog::warn("Task {} is lost: its shim was killed and its processes have all ended", taskLabel(r.allocId, r.name));
        r.state = TaskState::Lost;
        r.lostReason = "its shim was killed; the task's processes have ended with no exit code recorded";
        r.exit = ExitStatus{};
        r.exit.finishedAtUs = nowUs();
        finish(entry);
    });
}

Result<std::set<unsigned>> TaskManager::assignCpus(const std::string& unit, const scope::Resources& resources) {
    const unsigned cores = resources.cores.value_or(0) + static_cast<unsigned>(resources.cpuset.size());
    if (!unified_) {
        // systemd ignores AllowedCPUs on cgroup v1 (seen in the test bed),
        // so a reservation could not be kept: refuse it rather than lie.
        if (cores > 0)
            return makeError("NotSupported", "resources.cores/cpuset: reserving cores needs cgroup v2; this node runs "
                                             "cgroup v1, where systemd ignores AllowedCPUs");
        return std::set<unsigned>{};
    }
    if (cpus_.usable().empty()) {
        if (cores > 0) return makeError("NotSupported", "resources.cores: no usable cpuset on this node");
        return std::set<unsigned>{};
    }
    // The task asking is already an entry (starting), but not a shared one.
    if (!resources.cpuset.empty()) return cpus_.reserveExact(unit, resources.cpuset, runningSharedTasks(unit));
    if (cores > 0) return cpus_.reserve(unit, cores, runningSharedTasks(unit));
    return cpus_.sharedForNewTask();
}

void TaskManager::releaseCpus(TaskRecord& r) {
    if (!r.reservedCores) return;
    cpus_.release(r.unit);
    r.reservedCores = false;
    applySharedPool();
}

size_t TaskManager::runningSharedTasks(const std::string& exceptUnit) const {
    size_t n = 0;
    for (const auto& [key, e] : tasks_)
        if (!e->record.finished() && !e->record.reservedCores && e->record.unit != exceptUnit) ++n;
    return n;
}

void TaskManager::applySharedPool() {
    if (!unified_ || cpus_.usable().empty() || recovering_) return;
    const auto pool = cpus_.shared();
    if (pool.empty()) return;  // never written: v2 would read it as "every core"
    // Unchanged since the last pass: every shared task has it or has it
    // queued (a start that took an older pool catches up in completeStart),
    // so a start at 10,000 tasks costs no walk over all of them.
    if (pool == appliedPool_) return;
    appliedPool_ = pool;
    std::vector<Key> stale;
    for (auto& [key, e] : tasks_) {
        const auto& r = e->record;
        // A starting task has no unit yet; its start re-applies when done.
        if (r.finished() || r.reservedCores || r.state == TaskState::Starting || r.cpus == pool) continue;
        // At most one queued per task: it applies the pool of its time, so
        // a burst of reservations costs each shared task one call.
        if (e->poolQueued) continue;
        e->poolQueued = true;
        stale.push_back(key);
    }
    for (const auto& key : stale) submit(key, [this, key] { applyPool(key); });
}

void TaskManager::applyPool(const Key& key) {
    auto it = tasks_.find(key);
    if (it == tasks_.end()) return;
    auto& e = *it->second;
    e.poolQueued = false;
    const auto pool = cpus_.shared();
    if (e.record.finished() || e.record.reservedCores || pool.empty() || e.record.cpus == pool)
        return operationDone(key);
    scope::Resources only;
    only.allowedCpus = pool;
    systemd_.setUnitPropertiesAsync(e.record.unit, scope::resourceProperties(only), [this, key, pool](Result<void> ok) {
        auto it = tasks_.find(key);
        if (it == tasks_.end()) return;
        auto& r = it->second->record;
        if (!ok) {
            // The record keeps the cores the task really has.
            spdlog::warn("Failed to move {} to the shared cores {}: {}", r.unit, common::formatCpuList(pool),
                         ok.error().message);
            appliedPool_.clear();  // the next pass looks at every task again

        } else if (!r.finished()) {
            r.cpus = pool;
            persist(r);
            if (events_) events_->taskChanged(r);
        }
        operationDone(key);
    });
}

std::string TaskManager::sharedCpus() const {
    if (!unified_) return "";
    return common::formatCpuList(cpus_.shared());
}

void TaskManager::update(const std::string& allocId, const std::string& task, const std::string& text, Done done) {
    auto found = find(allocId, task);
    if (!found) return done(found.error());
    auto res = parseResources(text);
    if (!res) return done(res.error());
    if (res->cores) return done(makeError("InvalidSpec", "resources.cores cannot change on a running task"));
    auto props = scope::resourceProperties(*res);
    // A task that no longer oversubscribes must lose its old MemoryLow.
    if (res->memoryMb && !res->memoryMaxMb) props.emplace_back("MemoryLow", sdbus::Variant(uint64_t{0}));
    if (props.empty()) return done(makeError("InvalidSpec", "no resources to change"));
    const Key key{allocId, task};
    const bool dropMemoryMax = res->memoryMb && !res->memoryMaxMb;
    submit(key, [this, key, text, props, dropMemoryMax, done] {
        auto found = find(key.first, key.second);
        if (!found) return done(found.error());
        auto& r = (*found)->record;
        if (r.finished()) {
            done(makeError("NotRunning", "task " + taskLabel(key.first, key.second) + " has exited"));
            return operationDone(key);
        }
        systemd_.setUnitPropertiesAsync(r.unit, props, [this, key, text, dropMemoryMax, done](Result<void> ok) {
            auto found = find(key.first, key.second);
            if (!found) return done(found.error());
            auto& r = (*found)->record;
            if (!ok) {
                done(ok.error().context("update " + r.unit));
                return operationDone(key);
            }
            auto spec = nlohmann::json::parse(r.specJson, nullptr, false);
            auto change = nlohmann::json::parse(text, nullptr, false);
            if (spec.is_object() && change.is_object()) {
                for (const auto& [k, v] : change.items()) spec["resources"][k] = v;
                if (dropMemoryMax && spec["resources"].contains("memory_max_mb"))
                    spec["resources"].erase("memory_max_mb");
                r.specJson = spec.dump();
            }
            persist(r);
            spdlog::info("Updated task {}: {}", taskLabel(key.first, key.second), text);
            if (events_) events_->taskChanged(r);
            done({});
            operationDone(key);
        });
    });
}

Result<const TaskRecord*> TaskManager::get(const std::string& allocId, const std::string& task) const {
    auto e = find(allocId, task);
    if (!e) return e.error();
    return &(*e)->record;
}

std::vector<const TaskRecord*> TaskManager::list() const {
    std::vector<const TaskRecord*> out;
    for (const auto& [key, e] : tasks_) out.push_back(&e->record);
    return out;
}

void TaskManager::removeDirsOf(const TaskRecord& r) const {
    // Only the allocation's own entries (the map is ordered by allocation
    // first): forgetting every task of a full node looked at every task
    // once per forget.
    bool last = true;
    for (auto it = tasks_.lower_bound(Key{r.allocId, ""}); it != tasks_.end() && it->first.first == r.allocId; ++it)
        if (it->first.second != r.name) last = false;
    const auto iso = recordedIsolation(r.specJson, config_.isolation);
    if (auto done = removeTaskDirs(iso, config_.stateDir, r.allocId, r.name, last); !done)
        spdlog::warn("Failed to remove the dirs of task {}: {}", taskLabel(r.allocId, r.name), done.error().message);
}

bool TaskManager::allocHasLiveTasks(const std::string& allocId) const {
    for (auto it = tasks_.lower_bound(Key{allocId, ""}); it != tasks_.end() && it->first.first == allocId; ++it)
        if (!it->second->record.finished()) return true;
    return false;
}

void TaskManager::forget(const std::string& allocId, const std::string& task, Done done) {
    auto found = find(allocId, task);
    if (!found) return done(found.error());
    const Key key{allocId, task};
    submit(key, [this, key, done] {
        auto found = find(key.first, key.second);
        if (!found) return done(found.error());
        auto& r = (*found)->record;
        if (!r.finished()) {
            done(makeError("StillRunning", "task " + taskLabel(key.first, key.second) + " is still running"));
            return operationDone(key);
        }
        // Nothing is asked of systemd: every task scope is made with
        // CollectMode=inactive-or-failed, so systemd unloads it once it has
        // ended, failed or not; a unit of the name someone else left failed
        // is reset by the next start of the name. Forgetting a full node
        // therefore never waits behind PID 1's backlog of stops.
        // Answered once the record is off the disk: a restart right after
        // the reply must not bring the task back.
        unpersist(r, [this, key, done] {
            auto it = tasks_.find(key);  // busy with this forget: still there
            if (it == tasks_.end()) return done({});
            auto& gone = it->second->record;
            removeDirsOf(gone);
            if (events_) events_->taskRemoved(gone);
            auto queued = erase(gone);
            done({});
            runOrphans(std::move(queued));
        });
    });
}

}  // namespace taskscope::manager
