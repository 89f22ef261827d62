#pragma once
// The task lifecycle: start a task in its scope, signal and stop it, learn
// how it ended, and pick all of that up again after a restart. Plain
// domain logic; the D-Bus adaptor converts types and errors around it.

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/durable_writer.hpp"
#include "common/event_loop.hpp"
#include "common/loop_worker.hpp"
#include "common/result.hpp"
#include "common/step_clock.hpp"
#include "manager/config.hpp"
#include "manager/cpu_partitions.hpp"
#include "manager/launcher.hpp"
#include "manager/log_spool.hpp"
#include "manager/scope_reconciler.hpp"
#include "manager/shim_home.hpp"
#include "manager/state_store.hpp"
#include "scope/systemd_client.hpp"
#include "spec/task_spec.hpp"
#include "task/task_events.hpp"

namespace taskscope::manager {

/// Where cgroupfs is and which version it is. Unit tests point the root
/// at a directory of their own and choose the version, so a test on a
/// cgroup v2 host never writes the host's cgroup.kill files.
struct CgroupHost {
    std::string root = "/sys/fs/cgroup";
    std::optional<bool> unified;  ///< unset: cgroup v2 when cgroup2 is mounted at root
};

using task::ExitStatus;
using task::TaskEvents;
using task::TaskRecord;
using task::TaskState;

class TaskManager {
public:
    /// `usableCpus`: the fingerprint's usable cpuset, split into the
    /// shared pool and reservations (cgroup v2 only).
    TaskManager(Config config, scope::SystemdClient& systemd, common::EventLoop& loop, std::string objectPrefix,
                std::set<unsigned> usableCpus, CgroupHost host = {});
    ~TaskManager();
    TaskManager(const TaskManager&) = delete;
    TaskManager& operator=(const TaskManager&) = delete;

    /// Where new shims go (outside the manager's cgroup); without one they
    /// stay in the manager's (unit tests). Set before recover(), which
    /// moves shims an older manager left in its cgroup there too.
    void setShimHome(ShimHome* home) { shimHome_ = home; }

    /// Asked during every start, after the spec is parsed and resolved and
    /// before anything is created: may refuse the start or add to its spec
    /// (the plugin registry claims the plugin's name and sets its endpoint).
    using StartHook = std::function<common::Result<void>(const std::string& allocId, const std::string& task,
                                                         spec::TaskSpec& spec)>;
    void setStartHook(StartHook hook) { startHook_ = std::move(hook); }
    /// The namespace path of an allocation's ready network (NoSuchNetwork
    /// otherwise), for tasks whose spec joins it.
    using NetnsLookup = std::function<common::Result<std::string>(const std::string& allocId)>;
    void setNetworks(NetnsLookup lookup) { netnsOf_ = std::move(lookup); }

    /// A task of the allocation is starting or running (its network must stay).
    bool allocHasLiveTasks(const std::string& allocId) const;

    /// Loads persisted tasks, re-adopts running ones and collects exits
    /// that happened while the manager was away. Call before publishing.
    common::Result<void> recover();
    /// Starts delivering events (after the initial objects are published);
    /// exits found during recover() are announced now.
    void attach(TaskEvents& events);

    using StartDone = std::function<void(common::Result<const TaskRecord*>)>;
    using Done = std::function<void(common::Result<void>)>;

    /// Requests that change a task run in its own queue: one task's stay in
    /// the order they came, different tasks never wait for each other, and
    /// none waits for systemd on the caller's time. `done` gets the result,
    /// at once for a request refused up front, else from the event loop.
    /// A start's task exists at once in state "starting".
    void start(const std::string& allocId, const std::string& task, const std::string& specJson, StartDone done);
    void stop(const std::string& allocId, const std::string& task, const std::string& signal, int64_t graceMs,
              Done done);
    /// Drops an exited task's record (StillRunning otherwise).
    void forget(const std::string& allocId, const std::string& task, Done done);
    /// Changes a running task's limits through systemd (not its cores).
    void update(const std::string& allocId, const std::string& task, const std::string& resourcesJson, Done done);

    // Answered from memory, at once.
    common::Result<void> signal(const std::string& allocId, const std::string& task, const std::string& signal);
    common::Result<const TaskRecord*> get(const std::string& allocId, const std::string& task) const;
    std::vector<const TaskRecord*> list() const;

    /// Before the daemon exits (SIGTERM): every later start is refused with
    /// ShuttingDown (nothing of it is made), and `drained` is called once no
    /// start is under way any more, or after `bound` at the latest. A start
    /// finished here is running and answered; one refused can simply be
    /// asked again (one cut off all the same is removed by the next start).
    void drain(std::chrono::milliseconds bound, std::function<void()> drained);
    /// Starts admitted and not yet answered.
    size_t startsUnderWay() const;

    /// The cores every task without a reservation runs on ("" on v1).
    std::string sharedCpus() const;

    const Config& config() const { return config_; }

    /// The unit is a task's, or a start is creating it right now: the
    /// dangling-scope reconciler leaves it alone.
    /// A task owns its unit from the start request on (its entry exists
    /// while "starting"), so the reconciler never touches a scope being made.
    bool ownsUnit(const std::string& unit) const { return units_.count(unit) > 0; }

private:
    struct Entry {
        TaskRecord record;
        uint64_t killTimer = 0;
        /// Requests waiting for the one under way (busy) to finish.
        std::deque<std::function<void()>> queue;
        bool busy = false;
        bool poolQueued = false;  ///< a re-application of the shared pool waits in the queue
        uint64_t exitRetryTimer = 0;
        int exitReadFailures = 0;  ///< reads of an exit record that failed, in a row
        /// A task an older manager started (its shim holds nothing): that
        /// manager's hold, until the streamer is done with the output.
        LogSpool::Hold logHold;
        /// Its shim died without an exit record while the scope still has
        /// processes: polled until the scope is empty.
        uint64_t orphanTimer = 0;
    };

    /// A task is (alloc_id, task): its unit name is derived and may be
    /// ambiguous ("x-a"+"b" and "x"+"a-b" both escape to x-a-b.scope).
    using Key = std::pair<std::string, std::string>;

    /// What a start carries from its request to systemd's answer.
    struct StartState {
        StartDone done;
        Launch launch;
        scope::UnitProperties properties;  ///< of the task's scope
        std::optional<common::Error> refused;  ///< the spec did not parse (said on a later turn)
        uint64_t watch = 0;     ///< the loop's watch on the shim's report pipe
        bool released = false;  ///< told to exec; the next report is its outcome
        bool reserved = false;  ///< cores were reserved and go back on failure
        bool recordAsked = false;  ///< its record was asked on disk: a failure removes it first
        int writesPending = 0;     ///< writes of its record not on disk yet
        bool jobDone = false;      ///< systemd has made the scope
        common::StepClock clock;  ///< the start's profile, logged at debug level
    };

    common::Result<Entry*> find(const std::string& allocId, const std::string& task) const;
    /// Runs `op` now if the task is idle, else after the requests before
    /// it; `op` ends with operationDone(key), or by erasing the task.
    void submit(const Key& key, std::function<void()> op);
    void runNext(const Key& key);
    void operationDone(const Key& key);
    /// The drain's look: lets go once no start is under way, or at the deadline.
    void checkDrained();
    /// A start's steps, each run from the loop: the shim's pid report,
    /// systemd's answer, the shim's exec report.
    void watchShim(const Key& key, const std::shared_ptr<StartState>& state);
    /// A start past its admission, on a later turn of the loop: the spec
    /// checked and resolved, dirs and cores, then the start worker.
    void continueStart(const Key& key, const std::shared_ptr<StartState>& state);
    void finishStart(const Key& key, const std::shared_ptr<StartState>& state, common::Result<void> started);
    /// Writes the starting task's record (as running) off the loop.
    void writeStartRecord(const Key& key, const std::shared_ptr<StartState>& state);
    /// Lets the task exec once its scope exists and its record is on disk.
    void releaseWhenReady(const Key& key, const std::shared_ptr<StartState>& state);
    void completeStart(const Key& key, StartState& state, common::Result<void> released);
    /// A start's files and shim, made on the start worker (off the loop):
    /// the log directory, the spool's fifos and description, the spawn.
    /// Leaves nothing behind on error.
    common::Result<Launch> prepareLaunch(const spec::TaskSpec& spec, const LaunchPaths& paths,
                                         const std::optional<LogSettings>& spooled, const std::string& logDir,
                                         const std::string& unit, const std::string& allocId,
                                         const std::string& task) const;
    /// Undoes a start that failed before its task was released.
    void failStart(const Key& key, StartState& state, common::Error error);
    /// Removes the isolated task's dirs that taskscope made (forget).
    void removeDirsOf(const TaskRecord& record) const;
    common::Result<void> stopNow(Entry& entry, const std::string& signal, int64_t graceMs);
    void applyPool(const Key& key);
    /// The task whose scope is `unit`, or nullptr.
    Entry* byUnit(const std::string& unit) const;
    void insert(std::unique_ptr<Entry> entry);
    using Queue = std::deque<std::function<void()>>;
    /// Removes the task; returns the requests that waited for it, for
    /// runOrphans once the caller has answered its own.
    [[nodiscard]] Queue erase(const TaskRecord& record);
    void runOrphans(Queue queued);
    void onExitsDirEvent();  // also the spool dir: both share one inotify fd
    void collectExit(Entry& entry);
    /// Everything an ended task gets: cores back, timers off, the record
    /// on disk, leftovers killed, the exit announced.
    void finish(Entry& entry);
    void reapChildren();
    /// A running task's shim is gone: its exit record is collected if it
    /// left one, else the task stays running while its scope has processes.
    void onShimGone(Entry& entry);
    /// Watches a task without a shim until its scope is empty, then marks
    /// it lost (no exit code exists). It can be stopped meanwhile.
    void watchOrphan(Entry& entry);
    bool scopeHasProcesses(const TaskRecord& record) const;
    /// <root>[/hierarchy]<cgroup>/<file>, or nothing for a cgroup that is
    /// not a valid path below the root (scope::CgroupPath).
    std::optional<std::string> cgroupFile(const std::string& cgroup, const std::string& hierarchy,
                                          const std::string& file) const;
    void forceKill(Entry& entry);
    /// Kills every process of the task at record.killDeadlineUs (at once if past).
    void armKillTimer(Entry& entry);
    common::Result<void> signalMain(const TaskRecord& record, int signal) const;
    bool shimAlive(const TaskRecord& record) const;
    /// Saves the record off the loop (group commit); `durable` runs once
    /// it is on disk. A failed save ends the daemon (see persist()).
    void persist(const TaskRecord& record, std::function<void()> durable = {});
    /// Removes the task's record and exit record from disk.
    void unpersist(const TaskRecord& record, std::function<void()> gone = {});
    common::Result<std::set<unsigned>> assignCpus(const std::string& unit, const scope::Resources& resources);
    void releaseCpus(TaskRecord& record);
    /// Gives every running shared task the current shared pool.
    void applySharedPool();
    /// Tasks on the shared pool (also starting ones), but `exceptUnit`.
    size_t runningSharedTasks(const std::string& exceptUnit = "") const;

    Config config_;
    StateStore store_;
    LogSpool spool_;
    scope::SystemdClient& systemd_;
    common::EventLoop& loop_;
    std::string objectPrefix_;
    TaskEvents* events_ = nullptr;
    ShimHome* shimHome_ = nullptr;
    StartHook startHook_;
    NetnsLookup netnsOf_;
    std::map<Key, std::unique_ptr<Entry>> tasks_;
    std::map<std::string, Key> units_;  ///< unit name -> task: refuses a second task on one unit
    std::string cgroupRoot_;
    bool unified_ = false;  ///< cgroup v2 at cgroupRoot_
    bool recovering_ = false;  ///< reservations are being rebuilt; the pool is not final
    CpuPartitions cpus_;
    std::set<unsigned> appliedPool_;  ///< the shared pool the last pass gave out
    /// Last member: destroyed first, it finishes every write still asked.
    std::unique_ptr<common::DurableWriter> writer_;
    /// The synchronous part of each start (prepareLaunch), one after
    /// another off the loop. Declared after everything its work reads, so
    /// it is destroyed (and its thread joined) before them.
    std::unique_ptr<common::LoopWorker> spawner_;
    size_t preparing_ = 0;   ///< starts admitted whose shim is not spawned yet
    bool draining_ = false;  ///< the daemon is exiting: no start is admitted
    common::EventLoop::Clock::time_point drainDeadline_{};
    std::function<void()> drained_;
    /// Expires with this manager: work it posted to the loop, which the loop
    /// outlives (a restart in the unit tier), then does nothing.
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
    int inotifyFd_ = -1;
    int signalFd_ = -1;
    uint64_t inotifyWatch_ = 0;
    int spoolWd_ = -1;
    uint64_t signalWatch_ = 0;
};

}  // namespace taskscope::manager
