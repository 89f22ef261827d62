#pragma once
// Keeps the stats sampler's view of the running tasks in step with
// taskscope-manager, without ever waiting for it: the tasks and their
// cgroups (the Task1 objects' ControlGroup, which is systemd's) come from
// one GetManagedObjects call whenever the manager takes its bus name (at
// our start and after every restart of the manager), then from its signals.
// One call rather than ListTasks plus a GetTask per task: at 1000 tasks the
// latter would exceed the bus's limit of pending replies per connection.
// While the manager is down the view stays as it was; the tasks keep
// running and keep being sampled.
//
// A task's allocation slice (GetTask's alloc_slice; Task1 has no such
// property) is asked for with GetTask only when the sampler cannot place
// the task in a slice of its allocation it knows already: one call per
// allocation slice, plus one per flat task, and never more than
// kSliceLookups at once, so that listing 10,000 tasks stays within the
// bus's limit of pending replies.

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <sdbus-c++/sdbus-c++.h>

#include "common/event_loop.hpp"
#include "stream/daemon/manager_client.hpp"
#include "stream/stats/stats_sampler.hpp"

namespace taskscope::stream::daemon {

/// Who else follows which tasks the manager has: the log side, whose
/// records and files of a forgotten task go.
class TaskRoster {
public:
    virtual ~TaskRoster() = default;
    /// The unit of every task the manager has now, exited ones included
    /// (a fresh listing: at our start and whenever the manager returns).
    virtual void managerTasks(const std::set<std::string>& units) = 0;
    /// The manager forgot the task of this unit (its object went).
    virtual void taskForgotten(const std::string& unit) = 0;
};

class ManagerWatch final : public ManagerEvents {
public:
    ManagerWatch(sdbus::IConnection& connection, ManagerClient& manager, common::EventLoop& loop,
                 stats::StatsSampler& sampler);
    ~ManagerWatch() override;
    ManagerWatch(const ManagerWatch&) = delete;
    ManagerWatch& operator=(const ManagerWatch&) = delete;

    /// Subscribes to the manager's signals, then asks whether it runs.
    /// roster, when given, hears of every listing and every forgotten task.
    void start(TaskRoster* roster = nullptr);

private:
    void onOwnerChanged(const std::string& newOwner);
    void fetchAll();
    void onTasks(uint64_t generation, const common::Result<TaskObjects>& tasks);
    // ManagerEvents
    void taskAdded(const sdbus::ObjectPath& path, const TaskProperties& task) override;
    void taskRemoved(const sdbus::ObjectPath& path) override;
    void taskStateChanged(const std::string& allocId, const std::string& task, const std::string& state) override;
    void taskExited(const std::string& allocId, const std::string& task) override;
    void fetchOne(const stats::TaskKey& key);
    /// Asks the manager for the allocation slice of the allocation's tasks
    /// that the sampler cannot place (queued; a few at a time).
    void lookUpSlices(const std::string& allocId);
    void pumpSliceLookups();
    /// GetTask's answer for the task, asked about while its cgroup was `asked`.
    void answered(const stats::TaskKey& key, const std::string& asked, const wire::TaskInfo& task);
    void placeInSlice(const stats::TaskKey& key, const std::string& allocSlice);
    /// Adds the task when its properties say it runs in a cgroup; true if
    /// so. allocSlice: its alloc_slice, when known (GetTask's).
    bool learn(const TaskProperties& task, const std::string* allocSlice = nullptr);
    void scheduleRetry();

    sdbus::IConnection& connection_;
    ManagerClient& managerClient_;
    common::EventLoop& loop_;
    stats::StatsSampler& sampler_;
    TaskRoster* roster_ = nullptr;
    std::unique_ptr<sdbus::IProxy> dbus_;
    struct Known {
        stats::TaskKey key;
        std::string unit;
    };
    /// Every task object of the manager, exited ones too: InterfacesRemoved names only the path.
    std::map<std::string, Known> objects_;
    sdbus::Slot ownerMatch_;
    bool managerUp_ = false;
    uint64_t generation_ = 0;  ///< of the latest GetManagedObjects; older replies are stale
    uint64_t retryTimer_ = 0;
    std::deque<std::string> sliceQueue_;  ///< allocations with tasks to place
    std::set<std::string> sliceQueued_;   ///< the same, or being looked up
    unsigned sliceLookups_ = 0;           ///< GetTask calls in flight for them
};

}  // namespace taskscope::stream::daemon
