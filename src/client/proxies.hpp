#pragma once
// The one client library of taskscope's and systemd's D-Bus interfaces: a
// proxy class per interface, generated from its XML by sdbus-c++-xml2cpp
// and completed here once (the generated proxies leave every signal
// handler and every asynchronous reply to a subclass). Users hand in the
// handlers they need; a signal nobody handles is ignored. Used by
// taskscopectl, the Nomad driver and the daemons.
//
// A proxy that only calls (one per call in flight: sdbus-c++ 1.2 reports an
// asynchronous reply to one virtual per proxy) hears no signal
// (Signals::Ignored): it never subscribes.

#include <sdbus-c++/sdbus-c++.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/sdbus_compat.hpp"
#include "dbus/exec1_proxy.h"
#include "dbus/manager1_proxy.h"
#include "dbus/stats1_proxy.h"
#include "dbus/streamer1_proxy.h"
#include "dbus/systemd1_manager_proxy.h"

namespace taskscope::client {

inline constexpr const char* kManagerName = "org.taskscope.Manager1";
inline constexpr const char* kManagerPath = "/org/taskscope/Manager1";
inline constexpr const char* kStreamerName = "org.taskscope.Streamer1";
inline constexpr const char* kStreamerPath = "/org/taskscope/Streamer1";
inline constexpr const char* kSystemdName = "org.freedesktop.systemd1";
inline constexpr const char* kSystemdPath = "/org/freedesktop/systemd1";

/// Whether a proxy subscribes to its interface's signals.
enum class Signals { Heard, Ignored };

/// org.taskscope.Manager1's signals and GetTask's asynchronous reply.
struct ManagerHandlers {
    std::function<void(const std::string& allocId, const std::string& task, const sdbus::ObjectPath& path,
                       uint32_t pid)>
        taskStarted;
    std::function<void(const std::string& allocId, const std::string& task, const std::string& errorName)>
        taskStartFailed;
    std::function<void(const std::string& allocId, const std::string& task, const std::string& state)>
        taskStateChanged;
    std::function<void(const std::string& allocId, const std::string& task, int32_t exitCode, int32_t signal,
                       bool oomKilled)>
        taskExited;
    std::function<void(const std::string& unit, bool dryRun)> danglingScopeStopped;
    std::function<void(const std::string& allocId, const std::string& netnsPath)> networkCreated;
    std::function<void(const std::string& allocId)> networkDestroyed;
    /// GetTask's reply: the JSON, or the error (then the JSON is empty).
    std::function<void(const std::string& taskJson, sdbus_compat::ReplyError error)> getTaskReply;
    /// The manager's task objects (its ObjectManager), for ManagerObjectsProxy.
    using Interfaces = std::map<std::string, std::map<std::string, sdbus::Variant>>;
    std::function<void(const sdbus::ObjectPath& path, const Interfaces& interfaces)> interfacesAdded;
    std::function<void(const sdbus::ObjectPath& path, const std::vector<std::string>& interfaces)> interfacesRemoved;
};

/// The Manager1 part of a proxy, forwarding to its handlers.
template <class Base>
class ManagerHandled : public Base {
public:
    ManagerHandlers on;

    /// For calls the generated ones do not make (asynchronous ones with a
    /// timeout of their own).
    sdbus::IProxy& raw() { return this->getProxy(); }

protected:
    ManagerHandled(sdbus::IConnection& connection, ManagerHandlers handlers, const std::string& name)
        : Base(connection, sdbus_compat::ServiceName{name}, sdbus::ObjectPath{kManagerPath}), on(std::move(handlers)) {}

private:
    void onTaskStarted(const std::string& a, const std::string& t, const sdbus::ObjectPath& p,
                       const uint32_t& pid) override {
        if (on.taskStarted) on.taskStarted(a, t, p, pid);
    }
    void onTaskStartFailed(const std::string& a, const std::string& t, const std::string& name) override {
        if (on.taskStartFailed) on.taskStartFailed(a, t, name);
    }
    void onTaskStateChanged(const std::string& a, const std::string& t, const std::string& s) override {
        if (on.taskStateChanged) on.taskStateChanged(a, t, s);
    }
    void onTaskExited(const std::string& a, const std::string& t, const int32_t& code, const int32_t& sig,
                      const bool& oom) override {
        if (on.taskExited) on.taskExited(a, t, code, sig, oom);
    }
    void onDanglingScopeStopped(const std::string& unit, const bool& dryRun) override {
        if (on.danglingScopeStopped) on.danglingScopeStopped(unit, dryRun);
    }
    void onNetworkCreated(const std::string& a, const std::string& path) override {
        if (on.networkCreated) on.networkCreated(a, path);
    }
    void onNetworkDestroyed(const std::string& a) override {
        if (on.networkDestroyed) on.networkDestroyed(a);
    }
    void onGetTaskReply(const std::string& json, sdbus_compat::ReplyError error) override {
        if (on.getTaskReply) on.getTaskReply(json, error);
    }
};

/// org.taskscope.Manager1.
class ManagerProxy : public ManagerHandled<sdbus::ProxyInterfaces<org::taskscope::Manager1_proxy>> {
public:
    explicit ManagerProxy(sdbus::IConnection& connection, ManagerHandlers handlers = {},
                          Signals signals = Signals::Heard, const std::string& name = kManagerName);
    virtual ~ManagerProxy();
};

/// org.taskscope.Manager1 with its task objects' InterfacesAdded and
/// InterfacesRemoved (the streamer's watch of the manager).
class ManagerObjectsProxy final
    : public ManagerHandled<sdbus::ProxyInterfaces<org::taskscope::Manager1_proxy, sdbus::ObjectManager_proxy>> {
public:
    explicit ManagerObjectsProxy(sdbus::IConnection& connection, ManagerHandlers handlers = {},
                                 const std::string& name = kManagerName);
    ~ManagerObjectsProxy();

private:
    void onInterfacesAdded(const sdbus::ObjectPath& path,
                           const sdbus_compat::InterfacesAndProperties& interfaces) override {
        if (on.interfacesAdded) on.interfacesAdded(path, sdbus_compat::plainNames(interfaces));
    }
    void onInterfacesRemoved(const sdbus::ObjectPath& path, const sdbus_compat::InterfaceNames& interfaces) override {
        if (on.interfacesRemoved) on.interfacesRemoved(path, sdbus_compat::plainNames(interfaces));
    }
};

/// org.taskscope.Streamer1 (logs).
class StreamerProxy final : public sdbus::ProxyInterfaces<org::taskscope::Streamer1_proxy> {
public:
    std::function<void(const std::string& allocId, const std::string& task)> onLogs;  ///< LogsComplete

    explicit StreamerProxy(sdbus::IConnection& connection, Signals signals = Signals::Heard);
    ~StreamerProxy();

private:
    void onLogsComplete(const std::string& a, const std::string& t) override {
        if (onLogs) onLogs(a, t);
    }
};

/// org.taskscope.Exec1 (served by the streamer).
class ExecProxy : public sdbus::ProxyInterfaces<org::taskscope::Exec1_proxy> {
public:
    std::function<void(uint64_t session, const std::string& allocId, const std::string& task, int32_t exitCode,
                       int32_t signal)>
        onExited;  ///< ExecExited

    explicit ExecProxy(sdbus::IConnection& connection, Signals signals = Signals::Heard);
    virtual ~ExecProxy();
    /// For the calls whose timeouts the generated ones do not set.
    sdbus::IProxy& raw() { return getProxy(); }

private:
    void onExecExited(const uint64_t& session, const std::string& a, const std::string& t, const int32_t& code,
                      const int32_t& sig) override {
        if (onExited) onExited(session, a, t, code, sig);
    }
};

/// org.taskscope.Stats1 (served by the streamer).
class StatsProxy : public sdbus::ProxyInterfaces<org::taskscope::Stats1_proxy> {
public:
    using Sample = sdbus::Struct<std::string, std::string, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                                 double, double, double, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                                 uint64_t, uint64_t, uint64_t>;
    std::function<void(const std::vector<Sample>& samples)> onSampled;  ///< Samples

    explicit StatsProxy(sdbus::IConnection& connection, Signals signals = Signals::Heard);
    virtual ~StatsProxy();

private:
    void onSamples(const std::vector<Sample>& samples) override {
        if (onSampled) onSampled(samples);
    }
};

/// systemd's org.freedesktop.systemd1.Manager.
class SystemdManagerProxy final : public sdbus::ProxyInterfaces<org::freedesktop::systemd1::Manager_proxy> {
public:
    std::function<void(uint32_t id, const sdbus::ObjectPath& job, const std::string& unit, const std::string& result)>
        onJob;  ///< JobRemoved
    std::function<void(sdbus_compat::ReplyError error)> onAttached;  ///< AttachProcessesToUnit's reply

    explicit SystemdManagerProxy(sdbus::IConnection& connection, Signals signals = Signals::Heard);
    ~SystemdManagerProxy();
    /// For the calls the generated proxy does not make asynchronously.
    sdbus::IProxy& raw() { return getProxy(); }

private:
    void onJobRemoved(const uint32_t& id, const sdbus::ObjectPath& job, const std::string& unit,
                      const std::string& result) override {
        if (onJob) onJob(id, job, unit, result);
    }
    void onAttachProcessesToUnitReply(sdbus_compat::ReplyError error) override {
        if (onAttached) onAttached(error);
    }
};

}  // namespace taskscope::client
