#pragma once
// The streamer's one client of taskscope-manager, through the proxy
// generated from dbus/org.taskscope.Manager1.xml: GetTask, read into a
// wire::TaskInfo in one place, and the task signals; and its task objects
// (org.taskscope.Task1) through its ObjectManager. Everything is
// asynchronous, so the streamer's loop never waits for the manager.

#include <sdbus-c++/sdbus-c++.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "stream/daemon/call_pool.hpp"
#include "stream/exec/exec_service.hpp"
#include "wire/task_json.hpp"

namespace taskscope::stream::daemon {

/// A task object's org.taskscope.Task1 properties (dbus/org.taskscope.Task1.xml).
using TaskProperties = std::map<std::string, sdbus::Variant>;
/// The manager's task objects by object path.
using TaskObjects = std::map<sdbus::ObjectPath, TaskProperties>;

/// What the manager announces about its tasks.
class ManagerEvents {
public:
    virtual ~ManagerEvents() = default;
    /// A task object appeared (InterfacesAdded).
    virtual void taskAdded(const sdbus::ObjectPath& path, const TaskProperties& task) = 0;
    /// A task object went (InterfacesRemoved): the task was forgotten.
    virtual void taskRemoved(const sdbus::ObjectPath& path) = 0;
    virtual void taskStateChanged(const std::string& allocId, const std::string& task, const std::string& state) = 0;
    virtual void taskExited(const std::string& allocId, const std::string& task) = 0;
};

class ManagerClient final : public exec::TaskDirectory {
public:
    using TaskDone = std::function<void(common::Result<wire::TaskInfo>)>;
    using ListDone = std::function<void(common::Result<TaskObjects>)>;

    explicit ManagerClient(sdbus::IConnection& connection);
    ~ManagerClient() override;
    ManagerClient(const ManagerClient&) = delete;
    ManagerClient& operator=(const ManagerClient&) = delete;

    /// GetTask: done gets the task, the manager's named error (NoSuchTask,
    /// ...), or Internal when the manager could not be asked or answered
    /// what is not a task.
    void getTask(const std::string& allocId, const std::string& task, TaskDone done) override;

    /// Every task object's properties, in one GetManagedObjects call (at
    /// 1000 tasks, a GetTask each would exceed the bus's limit of pending
    /// replies per connection). Internal when the manager could not be asked.
    void listTasks(ListDone done);

    /// Subscribes to the manager's task signals, InterfacesAdded and
    /// InterfacesRemoved and passes them to events (one listener, for the client's lifetime).
    void listen(ManagerEvents& events);

private:
    class Call;
    class Signals;

    sdbus::IConnection& connection_;
    CallPool<Call> calls_;
    std::unique_ptr<sdbus::IProxy> objects_;  ///< for GetManagedObjects
    std::unique_ptr<Signals> signals_;
};

}  // namespace taskscope::stream::daemon
