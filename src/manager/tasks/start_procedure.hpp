#pragma once
// One start of a task, from its admission to its first instruction, as an
// explicit state: the step it has reached (StartStep) and, in one table,
// what each step owns from then on (kOwned in start_undo.cpp).
// Every way a start can fail runs the same undo list over what its steps
// own, in one order that is safe (the shim first, so that nothing of the
// task runs and nothing writes any more), and only then is the caller
// told: nothing of the start is left when it hears.
//
// A start never waits on the loop: its blocking work (files, fifos, the
// shim's spawn; the read of its cgroup) runs on workers, its questions to
// systemd and its writes to disk are asynchronous, and the shim's reports
// come through the loop.
//
// It tells its progress and its end through StartEvents (start_events.hpp);
// the registry owns the task's entry alone, and erases it when a start
// ends in failure: the start has given back all it took.

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "common/step_clock.hpp"
#include "common/worker.hpp"
#include "manager/launch/launcher.hpp"
#include "manager/launch/task_dirs.hpp"
#include "manager/node/allocation_slices.hpp"
#include "manager/node/cpu_pool.hpp"
#include "manager/node/node_checks.hpp"
#include "manager/node/shim_home.hpp"
#include "manager/records/log_spool.hpp"
#include "manager/records/record_writer.hpp"
#include "manager/tasks/config.hpp"
#include "manager/tasks/start_events.hpp"
#include "manager/tasks/task_holdings.hpp"
#include "scope/resources.hpp"
#include "scope/systemd_client.hpp"
#include "task/task_record.hpp"

namespace taskscope::manager {

/// What a start needs around it: the daemon's parts, which outlive every start.
struct StartContext {
    const Config& config;
    const LogSpool& spool;
    RecordWriter& records;
    scope::SystemdClient& systemd;
    common::EventLoop& loop;
    common::Worker& startWorker;   ///< files, fifos and the spawn, one start after another
    common::Worker& cgroupWorker;  ///< reads of /proc/<pid>/cgroup
    CpuPool& cpus;
    ShimHome* shimHome;  ///< null: shims stay in the manager's cgroup (unit tests)
    /// May refuse the start or add to its spec (the plugin registry).
    std::function<common::Result<void>(const std::string& allocId, const std::string& task, spec::TaskSpec& spec)> hook;
    /// The namespace of an allocation's ready network (NoSuchNetwork otherwise).
    std::function<common::Result<std::string>(const std::string& allocId)> netnsOf;
    /// The nested layout's slices; null: the task goes flat in config.slice.
    AllocationSlices* slices = nullptr;
    /// What the node offers (devices, IO controllers, fs.nr_open); null:
    /// not checked (unit tests of the procedure).
    const NodeLimits* node = nullptr;
    /// No other task of the allocation is known (a failed start's undo
    /// then removes the allocation's dir that taskscope made); unset: never.
    std::function<bool(const std::string& allocId, const std::string& task)> lastOfAlloc;
};

class StartProcedure {
public:
    /// `draft`: the task as admitted (names, unit, spec); `refused`: why
    /// its spec was refused at admission, said on the start's first turn.
    StartProcedure(StartContext ctx, task::TaskRecord draft, std::optional<common::Error> refused, StartEvents& events);
    ~StartProcedure();
    StartProcedure(const StartProcedure&) = delete;
    StartProcedure& operator=(const StartProcedure&) = delete;

    /// Runs the start (on a turn of the loop after its admission).
    void begin();

    StartStep step() const { return step_; }
    /// What the task holds once its start has succeeded: its entry's from
    /// then on (a failed start has given all of it back).
    TaskHoldings takeHoldings() { return std::move(holdings_); }
    /// Where the start spent its time (logged at debug level once it ends).
    const common::StepClock& clock() const { return clock_; }

private:
    using Next = std::function<void()>;
    struct Undo {
        const char* what;
        StartStep heldFrom;  ///< owned from this step on
        void (StartProcedure::*run)(Next next);
    };
    static const Undo kOwned[];

    /// The start reached `step`; false when a fault point holds it there
    /// (config.hpp's faultPoints): the caller goes no further, and the
    /// start's deadline fails it.
    [[nodiscard]] bool reach(StartStep step);
    void prepare(spec::TaskSpec spec, LaunchPaths paths, std::optional<LogSettings> spooled, std::string logDir);
    /// The worker's part (only the filesystem and constants of the context):
    /// the spec resolved on this node (user, binary, node checks, task
    /// dirs, the root's user), then the files and the shim.
    static common::Result<Launch> prepareLaunch(const StartContext& ctx, spec::TaskSpec spec,
                                                const LaunchPaths& paths, const std::optional<LogSettings>& spooled,
                                                const std::string& logDir, const std::string& unit,
                                                const std::string& allocId, const std::string& task,
                                                bool lookForLeftovers);
    void watchReports();
    void onReport();
    void onPid(common::Result<std::string> line);
    /// Its scope, with the slices made in the same call (`aux`).
    /// Its scope, with its CPUWeight when `carryWeight` (a task alone in
    /// its allocation leaves it to the slice: allocation_slices.hpp).
    void startScope(const scope::AuxUnits& aux, bool carryWeight, scope::SystemdClient::Completion started);
    void onSlices(common::Result<void> made);
    void onScope(common::Result<void> made);
    void onCgroup(std::string cgroup);
    void writeRecord();
    void releaseWhenReady();
    void onExec(common::Result<void> released);
    void succeedWhenKnown();

    /// Every failure: the undo list, then the end.
    void fail(common::Error error);
    void undoFrom(size_t index);
    void undoShim(Next next);
    void undoScope(Next next);
    void undoRecord(Next next);
    void undoSpool(Next next);
    void undoProcessSpec(Next next);
    void undoDirs(Next next);
    void undoSlices(Next next);
    void undoCores(Next next);
    void endWait();
    /// start_timeout_ms passed: a start not yet released fails (Overloaded).
    void onDeadline();
    common::Error overloaded() const;
    /// It failed at its deadline: its caller was promised an answer by now.
    bool failedOverloaded() const;

    std::string label() const { return draft_.allocId + "/" + draft_.name; }
    HoldingParts holdingParts() const {
        return {ctx_.cpus, ctx_.slices, ctx_.spool, ctx_.records, ctx_.startWorker};
    }

    StartContext ctx_;
    task::TaskRecord draft_;
    std::optional<common::Error> refused_;
    StartEvents& events_;
    StartStep step_ = StartStep::Admitted;
    common::StepClock clock_;
    scope::UnitProperties properties_;  ///< of the task's scope
    std::optional<scope::TaskSlices> slices_;  ///< where it goes in the nested layout
    AllocationSlices::TaskCpu cpu_;            ///< what it weighs in its slices' sums
    bool journal_ = false;                     ///< its output is copied to the journal: its pid goes in the spool
    /// What the start has taken so far, given back by its undo list.
    TaskHoldings holdings_;
    bool slicesMade_ = false;                  ///< the slices above its scope exist, with their weights
    Launch launch_;
    uint64_t reportWatch_ = 0;
    bool scopeMade_ = false;
    bool recordOnDisk_ = false;  ///< a write of it as running is durable
    bool cgroupKnown_ = false;
    bool execReported_ = false;
    // While undoing:
    std::optional<common::Error> failure_;
    uint64_t pidfdWatch_ = 0;
    uint64_t waitTimer_ = 0;
    uint64_t deadlineTimer_ = 0;
    bool deadlinePassed_ = false;  ///< while the worker prepared the launch
    /// Its turn on the start worker: waiting, taken (the job runs), or
    /// skipped (the deadline passed first: the job makes nothing).
    static constexpr int kTurnWaiting = 0, kTurnTaken = 1, kTurnSkipped = 2;
    std::shared_ptr<std::atomic<int>> workerTurn_;
    bool lookForLeftovers_ = false;
    bool held_ = false;  ///< by a fault point, until its deadline
    int pidfd_ = -1;
    /// Expires with this start: answers that come after it do nothing.
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
};

}  // namespace taskscope::manager
