#pragma once
// The manager's D-Bus face: converts types and errors, nothing more. The
// generated adaptors come from dbus/org.taskscope.{Manager1,Task1}.xml.

#include <sdbus-c++/sdbus-c++.h>

#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "dbus/manager1_adaptor.h"
#include "dbus/task1_adaptor.h"
#include "manager/tasks/task_registry.hpp"
#include "network/network_manager.hpp"

namespace taskscope::manager {

inline constexpr const char* kManagerPath = "/org/taskscope/Manager1";
inline constexpr const char* kTaskPathPrefix = "/org/taskscope/Manager1/task";

/// Node facts the manager publishes as properties.
struct NodeFacts {
    std::string version;
    std::string fingerprintJson;
    std::string cgroupVersion;
};

class TaskObject final
    : public sdbus::AdaptorInterfaces<org::taskscope::Task1_adaptor, sdbus::ManagedObject_adaptor,
                                      sdbus::Properties_adaptor> {
public:
    TaskObject(sdbus::IConnection& connection, const TaskRecord& record);
    ~TaskObject();
    TaskObject(const TaskObject&) = delete;
    TaskObject& operator=(const TaskObject&) = delete;

    void changed();

private:
    std::string AllocId() override { return record_.allocId; }
    std::string Name() override { return record_.name; }
    std::string Unit() override { return record_.unit; }
    std::string State() override { return toString(record_.state); }
    uint32_t MainPID() override { return static_cast<uint32_t>(record_.pid); }
    std::string ControlGroup() override { return record_.cgroup; }
    std::string Slice() override;
    std::string AllocSlice() override;
    std::string AllowedCPUs() override;
    bool ReservedCores() override { return record_.reservedCores; }
    uint64_t CPUWeight() override;
    std::string CPUWeightUnit() override;
    int32_t ExitCode() override { return record_.finished() ? record_.exit.exitCode : -1; }
    int32_t Signal() override { return record_.exit.signal; }
    bool OOMKilled() override { return record_.exit.oomKilled; }
    uint64_t StartedAt() override { return record_.startedAtUs; }
    uint64_t FinishedAt() override { return record_.exit.finishedAtUs; }
    // Properties reach any reader (Get, GetManagedObjects, PropertiesChanged):
    // never a secret. Root reads the whole spec with GetTaskSpec or GetTask.
    std::string Spec() override;

    const TaskRecord& record_;
    // Redacting parses and prints the spec; GetManagedObjects and every
    // PropertiesChanged read it, so it is done once per spec (UpdateTask
    // changes the record's spec, hence the source kept beside it).
    std::string redactedFrom_, redacted_;
};

class ManagerObject final
    : public sdbus::AdaptorInterfaces<org::taskscope::Manager1_adaptor, sdbus::ObjectManager_adaptor,
                                      sdbus::Properties_adaptor>,
      public TaskEvents,
      public network::NetworkEvents {
public:
    ManagerObject(sdbus::IConnection& connection, TaskRegistry& tasks, network::NetworkManager& networks,
                  NodeFacts facts);
    ~ManagerObject();
    ManagerObject(const ManagerObject&) = delete;
    ManagerObject& operator=(const ManagerObject&) = delete;

    // TaskEvents
    void taskAdded(const TaskRecord& task) override;
    void taskChanged(const TaskRecord& task) override;
    void taskExited(const TaskRecord& task) override;
    void taskRemoved(const TaskRecord& task) override;
    void taskStartFailed(const TaskRecord& task, const std::string& errorName) override;

    // NetworkEvents
    void networkCreated(const std::string& allocId, const std::string& netnsPath) override {
        emitNetworkCreated(allocId, netnsPath);
    }
    void networkDestroyed(const std::string& allocId) override { emitNetworkDestroyed(allocId); }

    /// Announces a dangling scope the reconciler killed (or found, in dry run).
    void danglingScopeStopped(const std::string& unit, bool dryRun) { emitDanglingScopeStopped(unit, dryRun); }

private:
    // Asynchronous: the reply goes out when the task manager is done.
    void StartTask(sdbus::Result<sdbus::ObjectPath>&& result, std::string allocId, std::string task,
                   std::string specJson) override;
    void StopTask(sdbus::Result<>&& result, std::string allocId, std::string task, std::string signal,
                  int64_t graceMs) override;
    void UpdateTask(sdbus::Result<>&& result, std::string allocId, std::string task,
                    std::string resourcesJson) override;
    void ForgetTask(sdbus::Result<>&& result, std::string allocId, std::string task) override;
    void SignalTask(sdbus::Result<>&& result, std::string allocId, std::string task, std::string signal) override;
    std::string GetTask(const std::string& allocId, const std::string& task) override;
    std::string GetTaskSpec(const std::string& allocId, const std::string& task) override;
    std::vector<sdbus::Struct<std::string, std::string, std::string, sdbus::ObjectPath>> ListTasks() override;
    void CreateNetwork(sdbus::Result<>&& result, std::string allocId, std::string specJson) override;
    void DestroyNetwork(sdbus::Result<>&& result, std::string allocId) override;
    std::string GetNetwork(const std::string& allocId) override;
    std::vector<sdbus::Struct<std::string, std::string, std::string>> ListNetworks() override;
    std::string SharedCPUs() override { return tasks_.sharedCpus(); }

    std::string Version() override { return facts_.version; }
    std::string Slice() override { return tasks_.config().slice; }
    std::string Fingerprint() override { return facts_.fingerprintJson; }
    std::string CgroupVersion() override { return facts_.cgroupVersion; }

    /// The caller of the method being served runs as root (effective uid
    /// 0, as the bus daemon saw it); false when that cannot be learned.
    /// dbus-daemon attaches no credentials to messages, so sd-bus asks it
    /// for them with a synchronous call, which held the whole loop for a
    /// bus round trip on every GetTask; a caller's uid is kept by its
    /// unique name instead (dbus-daemon never gives one name to two
    /// connections, and a connection's uid never changes).
    bool callerIsRoot();

    sdbus::IConnection& connection_;
    TaskRegistry& tasks_;
    network::NetworkManager& networks_;
    NodeFacts facts_;
    std::map<std::string, std::unique_ptr<TaskObject>> objects_;  // by unit
    std::unordered_map<std::string, uid_t> callerUids_;             // by unique bus name
};

/// How much of a task's spec a reader may see.
enum class SpecView { Redacted, Full };

/// The JSON GetTask returns; its "spec" is redacted unless `view` is Full.
std::string taskJson(const TaskRecord& record, SpecView view);

}  // namespace taskscope::manager
