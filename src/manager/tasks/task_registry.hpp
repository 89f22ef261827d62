#pragma once
// The manager's tasks: the map of them, each task's queue of requests, the
// calls answered from memory, the small changes (stop, signal, update,
// forget) and recovery after a restart. Everything else is a part it holds
// and hears from through a small interface:
//
//   StartProcedure (start_procedure.hpp)  one start, as an explicit state
//                                         with one undo list; StartEvents
//   StopProcedure  (stop_procedure.hpp)   one stop, its steps and what they
//                                         hold until the end; StopEvents
//   TaskEnd        (task_end.hpp)         a task's end, what it gives back
//                                         in one order; EndEvents
//   ExitWatch      (exit_watch.hpp)       shims reaped, exit records,
//                                         drained output; ExitEvents
//   CpuPool        (cpu_pool.hpp)         who holds which cores
//   ScopeKiller    (scope/scope_killer.hpp) a kill per cgroup version
//   RecordWriter   (record_writer.hpp)    records on disk, off the loop
//
// Plain domain logic; the D-Bus adaptor converts types and errors around
// it, and what the operator is told goes out through TaskNotes (the
// daemon words it for the journal): nothing here logs.

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "common/worker.hpp"
#include "manager/node/allocation_slices.hpp"
#include "manager/node/cpu_pool.hpp"
#include "manager/node/node_checks.hpp"
#include "manager/node/shim_home.hpp"
#include "manager/node/stop_pacer.hpp"
#include "manager/records/log_spool.hpp"
#include "manager/records/record_writer.hpp"
#include "manager/records/state_store.hpp"
#include "manager/tasks/config.hpp"
#include "manager/tasks/exit_watch.hpp"
#include "manager/tasks/start_events.hpp"
#include "manager/tasks/stop_procedure.hpp"
#include "manager/tasks/task_end.hpp"
#include "manager/tasks/task_holdings.hpp"
#include "manager/tasks/task_notes.hpp"
#include "scope/cgroup_host.hpp"
#include "scope/scope_killer.hpp"
#include "scope/systemd_client.hpp"
#include "spec/task_spec.hpp"
#include "task/task_events.hpp"

namespace taskscope::manager {

using task::ExitStatus;
using task::TaskEvents;
using task::TaskRecord;
using task::TaskState;

class StartProcedure;

class TaskRegistry final : private StartEvents, private ExitEvents, private StopEvents, private EndEvents {
public:
    /// `systemd`: the loop's (asynchronous) client; `startup`: the blocking
    /// one, for recovery only. `usableCpus`: the fingerprint's usable
    /// cpuset, split into the shared pool and reservations (cgroup v2 only).
    TaskRegistry(Config config, scope::SystemdClient& systemd, scope::BlockingSystemd& startup, common::EventLoop& loop,
                 std::string objectPrefix, std::set<unsigned> usableCpus,
                 scope::CgroupHost host = scope::CgroupHost::detect());
    ~TaskRegistry() override;
    TaskRegistry(const TaskRegistry&) = delete;
    TaskRegistry& operator=(const TaskRegistry&) = delete;

    /// Where new shims go (outside the manager's cgroup); without one they
    /// stay in the manager's (unit tests). Set before recover(), which
    /// moves shims an older manager left in its cgroup there too.
    void setShimHome(ShimHome* home) { shimHome_ = home; }
    /// Who tells the operator what happened to the tasks (the daemon's
    /// journal); unset, nobody (QuietNotes). The registry never logs.
    void setNotes(TaskNotes& notes) { notes_ = &notes; }

    /// Asked during every start, after the spec is parsed and resolved and
    /// before anything is created: may refuse the start or add to its spec
    /// (the plugin registry claims the plugin's name and sets its endpoint).
    using StartHook =
        std::function<common::Result<void>(const std::string& allocId, const std::string& task, spec::TaskSpec& spec)>;
    void setStartHook(StartHook hook) { startHook_ = std::move(hook); }
    /// The namespace path of an allocation's ready network (NoSuchNetwork
    /// otherwise), for tasks whose spec joins it.
    using NetnsLookup = std::function<common::Result<std::string>(const std::string& allocId)>;
    void setNetworks(NetnsLookup lookup) { netnsOf_ = std::move(lookup); }

    /// No task of the allocation is known but `task` (its dirs go with it).
    bool lastOfAlloc(const std::string& allocId, const std::string& task) const;
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
    /// Signals the task's main process while it is in the task's scope (the
    /// check reads /proc, off the loop).
    void signal(const std::string& allocId, const std::string& task, const std::string& signal, Done done);

    // Answered from memory, at once.
    common::Result<const TaskRecord*> get(const std::string& allocId, const std::string& task) const;
    std::vector<const TaskRecord*> list() const;

    /// Before the daemon exits (SIGTERM): every later start is refused with
    /// ShuttingDown (nothing of it is made), and `drained` is called once no
    /// start is under way any more, or after `bound` at the latest.
    void drain(std::chrono::milliseconds bound, std::function<void()> drained);
    /// Starts admitted and not yet answered.
    size_t startsUnderWay() const;

    /// The cores every task without a reservation runs on ("" on v1).
    std::string sharedCpus() const { return pool_.sharedText(); }

    const Config& config() const { return config_; }

    /// The unit is a task's, or a start is creating it right now (its entry
    /// exists from the request on): the dangling-scope reconciler leaves it
    /// alone.
    bool ownsUnit(const std::string& unit) const { return units_.count(unit) > 0; }
    /// The slice is an allocation's slice that a task of this manager is
    /// in, or is being removed, or whose allocation has a task here (one
    /// starting may be about to make it again): the reconciler leaves it
    /// alone.
    bool ownsSlice(const std::string& slice) const;
    const scope::SliceLayout& sliceLayout() const { return allocSlices_.layout(); }

private:
    struct Entry {
        TaskRecord record;
        /// What it holds beyond this entry (its start's, once it ran; read
        /// back from its record at recovery), given back through it alone.
        TaskHoldings holdings;
        /// Its stop, from the first StopTask (or a restart mid-stop) on.
        std::unique_ptr<StopProcedure> stop;
        /// Requests waiting for the one under way (busy) to finish.
        std::deque<std::function<void()>> queue;
        bool busy = false;
        bool poolQueued = false;  ///< a re-application of the shared pool waits in the queue
        /// A task an older manager started (its shim holds nothing): that
        /// manager's hold, until the streamer is done with the output.
        LogSpool::Hold logHold;
        /// While it starts: its start, who to answer, and whether it still
        /// counts against the descriptor budget (its shim not spawned yet).
        std::unique_ptr<StartProcedure> start;
        StartDone startDone;
        bool inBudget = false;
    };

    /// A task is (alloc_id, task): its unit name is derived and may be
    /// ambiguous ("x-a"+"b" and "x"+"a-b" both escape to x-a-b.scope).
    using Key = std::pair<std::string, std::string>;
    using Queue = std::deque<std::function<void()>>;

    // The map and the queues.
    common::Result<Entry*> find(const std::string& allocId, const std::string& task) const;
    Entry* byUnit(const std::string& unit) const;
    void insert(std::unique_ptr<Entry> entry);
    /// Removes the task's entry (its pending watches and timers with it);
    /// returns the requests that waited for it, for runOrphans once the
    /// caller has answered its own. A failed start has given back what it
    /// took; a known task's goes with release() first.
    [[nodiscard]] Queue erase(const TaskRecord& record);
    /// What a known task still holds, given back as it goes (forgotten, or
    /// found never to have run): task_holdings.hpp's releaseRest, the dirs
    /// (its allocation's with its last task) on the start worker; `removed`
    /// runs on the loop once they are. Erase the entry right after: the
    /// next task of the allocation to go must find this one gone.
    void release(Entry& entry, std::function<void()> removed = {});
    /// The parts a task's holdings are given back to.
    HoldingParts holdingParts() { return {pool_, &allocSlices_, spool_, records_, startWorker_}; }
    void runOrphans(Queue queued);
    /// Runs `op` now if the task is idle, else after the requests before
    /// it; `op` ends with operationDone(key), or by erasing the task.
    void submit(const Key& key, std::function<void()> op);
    void runNext(const Key& key);
    void operationDone(const Key& key);
    /// While draining: the drain ends once no start is under way.
    void checkDrained();
    /// The drain's end (its last start ended, or its bound passed), once.
    void endDrain();

    // StartEvents
    void startProgressed(const TaskRecord& draft, StartStep step) override;
    void startEnded(const TaskRecord& draft, common::Result<void> outcome) override;
    void sharedPoolGrew() override;
    /// allocation_slices.hpp's WeightMoved: the record follows.
    void weightMoved(const std::string& unit);
    /// A finished start is destroyed on a later turn (it is on the stack).
    void retire(std::unique_ptr<StartProcedure> start);

    // ExitEvents
    void shimsReaped(const std::set<pid_t>& pids) override;
    void exitRecorded(const std::string& unit) override;
    void spoolDrained(const std::string& unit) override;
    void exitRead(const std::string& unit, common::Result<ExitStatus> status) override;
    void orphanEnded(const std::string& unit) override;

    // StopEvents
    void stopChanged(const TaskRecord& record) override;
    void signalTask(const TaskRecord& record, int signal) override;
    void stopSent(const TaskRecord& record, int signal, int64_t graceMs) override;
    void stopQueued(const TaskRecord& record) override;
    void killFailed(const TaskRecord& record, const common::Error& error) override;

    // EndEvents
    void coresFreed(TaskRecord& record) override;
    void endAnnounced(TaskRecord& record) override;
    void leftoversSurvived(const std::string& unit, const common::Error& error) override;
    void shimDiedWithoutRecord(const TaskRecord& record) override;

    // Stops and signals.
    /// The task's stop procedure, made on first use.
    StopProcedure& stopOf(Entry& entry);
    /// The pacer's turn for a stop that waited (its record holds it).
    void admitStop(const std::string& unit);
    /// Signals the main process, off the loop; `done` from the loop.
    void signalMain(const TaskRecord& record, int signal, Done done);
    /// After recovery: the allocation slices' weights, each sent again
    /// only where its slice does not hold it already.
    void reapplySliceWeights();

    // The shared pool.
    void releaseCpus(TaskRecord& record);
    /// Gives every running shared task the current shared pool: one call
    /// on the share slice for the nested ones, one per flat task.
    void applySharedPool();
    /// The nested layout's shared tasks take `pool` (their share slice has it).
    void nestedTookPool(const std::set<unsigned>& pool);
    void applyPool(const Key& key);

    // Recovery (task_registry_recovery.cpp).
    bool shimAlive(const TaskRecord& record) const;
    bool scopeHasProcesses(const TaskRecord& record) const;
    /// A running task's cgroup not on its record (its manager died before
    /// it wrote it): asked of systemd, at startup.
    void learnCgroup(TaskRecord& record);
    void recoverOne(Entry& entry, std::map<std::string, common::UniqueFd>& stored, size_t& readopted,
                    std::vector<Key>& neverRan);

    Config config_;
    StateStore store_;
    LogSpool spool_;
    scope::SystemdClient& systemd_;
    scope::BlockingSystemd& startup_;
    common::EventLoop& loop_;
    std::string objectPrefix_;
    scope::CgroupHost host_;
    NodeLimits node_;  ///< read once: what a spec's devices, IO and rlimits are checked against
    TaskEvents* events_ = nullptr;
    QuietNotes quiet_;
    TaskNotes* notes_ = &quiet_;
    ShimHome* shimHome_ = nullptr;
    StartHook startHook_;
    NetnsLookup netnsOf_;
    std::map<Key, std::unique_ptr<Entry>> tasks_;
    std::map<std::string, Key> units_;  ///< unit name -> task: refuses a second task on one unit
    CpuPool pool_;
    /// The nested layout's slices (also of tasks started nested before
    /// nested_slices was turned off).
    AllocationSlices allocSlices_;
    /// StopTask's signals, at systemd's pace (key stop_window).
    StopPacer stops_;
    /// Shims this manager spawned and has not reaped, to the unit each
    /// runs: a task's scope empties when its shim exits (it waits for the
    /// streamer after the task's exit), so its stop's place in the window
    /// frees from that, not from the task's end.
    std::map<pid_t, std::string> liveShims_;
    size_t preparing_ = 0;   ///< starts admitted whose shim is not spawned yet
    bool draining_ = false;  ///< the daemon is exiting: no start is admitted
    uint64_t drainTimer_ = 0;  ///< the drain's bound
    std::function<void()> drained_;
    std::vector<std::unique_ptr<StartProcedure>> retired_;
    /// Expires with this registry: work it posted to the loop, which the
    /// loop outlives (a restart in the unit tier), then does nothing.
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
    // The parts that run work off the loop, after everything their work
    // and results touch: destroyed (their threads joined) first.
    RecordWriter records_;
    /// The synchronous part of each start, one after another off the loop.
    common::Worker startWorker_;
    /// cgroup writes and reads, which wait behind the kernel's cgroup lock.
    common::Worker cgroupWorker_;
    std::unique_ptr<scope::ScopeKiller> killer_;
    ExitWatch exits_;
    TaskEnd end_;
};

}  // namespace taskscope::manager
