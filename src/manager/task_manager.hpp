#pragma once
// The task lifecycle: start a task in its scope, signal and stop it, learn
// how it ended, and pick all of that up again after a restart. Plain
// domain logic; the D-Bus adaptor converts types and errors around it.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "manager/config.hpp"
#include "manager/cpu_partitions.hpp"
#include "manager/log_spool.hpp"
#include "manager/state_store.hpp"
#include "manager/task_record.hpp"
#include "scope/systemd_client.hpp"

namespace taskscope::manager {

/// Where cgroupfs is and which version it is. Unit tests point the root
/// at a directory of their own and choose the version, so a test on a
/// cgroup v2 host never writes the host's cgroup.kill files.
struct CgroupHost {
    std::string root = "/sys/fs/cgroup";
    std::optional<bool> unified;  ///< unset: cgroup v2 when cgroup2 is mounted at root
};

/// What the outside (the bus) hears of tasks.
class TaskEvents {
public:
    virtual ~TaskEvents() = default;
    virtual void taskAdded(const TaskRecord& task) = 0;
    virtual void taskChanged(const TaskRecord& task) = 0;
    virtual void taskExited(const TaskRecord& task) = 0;
    virtual void taskRemoved(const TaskRecord& task) = 0;
};

class TaskManager {
public:
    /// `usableCpus`: the fingerprint's usable cpuset, split into the
    /// shared pool and reservations (cgroup v2 only).
    TaskManager(Config config, scope::SystemdClient& systemd, common::EventLoop& loop, std::string objectPrefix,
                std::set<unsigned> usableCpus, CgroupHost host = {});
    ~TaskManager();
    TaskManager(const TaskManager&) = delete;
    TaskManager& operator=(const TaskManager&) = delete;

    /// Loads persisted tasks, re-adopts running ones and collects exits
    /// that happened while the manager was away. Call before publishing.
    common::Result<void> recover();
    /// Starts delivering events (after the initial objects are published);
    /// exits found during recover() are announced now.
    void attach(TaskEvents& events);

    common::Result<const TaskRecord*> start(const std::string& allocId, const std::string& task,
                                            const std::string& specJson);
    common::Result<void> stop(const std::string& allocId, const std::string& task, const std::string& signal,
                              int64_t graceMs);
    common::Result<void> signal(const std::string& allocId, const std::string& task, const std::string& signal);
    common::Result<const TaskRecord*> get(const std::string& allocId, const std::string& task) const;
    std::vector<const TaskRecord*> list() const;
    common::Result<void> forget(const std::string& allocId, const std::string& task);
    /// Changes a running task's limits through systemd (not its cores).
    common::Result<void> update(const std::string& allocId, const std::string& task, const std::string& resourcesJson);

    /// The cores every task without a reservation runs on ("" on v1).
    std::string sharedCpus() const;

    const Config& config() const { return config_; }

private:
    struct Entry {
        TaskRecord record;
        uint64_t killTimer = 0;
        uint64_t exitRetryTimer = 0;
        int exitReadFailures = 0;  ///< reads of an exit record that failed, in a row
        LogSpool::Hold logHold;  ///< until the streamer is done with the task's output
    };

    /// A task is (alloc_id, task): its unit name is derived and may be
    /// ambiguous ("x-a"+"b" and "x"+"a-b" both escape to x-a-b.scope).
    using Key = std::pair<std::string, std::string>;

    common::Result<Entry*> find(const std::string& allocId, const std::string& task) const;
    /// The task whose scope is `unit`, or nullptr.
    Entry* byUnit(const std::string& unit) const;
    void insert(std::unique_ptr<Entry> entry);
    void erase(const TaskRecord& record);
    void onExitsDirEvent();  // also the spool dir: both share one inotify fd
    void collectExit(Entry& entry);
    /// Everything an ended task gets: cores back, timers off, the record
    /// on disk, leftovers killed, the exit announced.
    void finish(Entry& entry);
    void reapChildren();
    void forceKill(Entry& entry);
    /// Kills every process of the task at record.killDeadlineUs (at once if past).
    void armKillTimer(Entry& entry);
    common::Result<void> signalMain(const TaskRecord& record, int signal) const;
    bool shimAlive(const TaskRecord& record) const;
    void persist(const TaskRecord& record);
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
    std::map<Key, std::unique_ptr<Entry>> tasks_;
    std::map<std::string, Key> units_;  ///< unit name -> task: refuses a second task on one unit
    std::string cgroupRoot_;
    bool unified_ = false;  ///< cgroup v2 at cgroupRoot_
    bool recovering_ = false;  ///< reservations are being rebuilt; the pool is not final
    CpuPartitions cpus_;
    int inotifyFd_ = -1;
    int signalFd_ = -1;
    uint64_t inotifyWatch_ = 0;
    int spoolWd_ = -1;
    uint64_t signalWatch_ = 0;
};

}  // namespace taskscope::manager
