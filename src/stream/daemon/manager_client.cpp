#include "stream/daemon/manager_client.hpp"

#include <algorithm>
#include <chrono>

#include "common/bus_error.hpp"
#include "dbus/manager1_proxy.h"
#include "dbus/task1_proxy.h"
#include "stream/daemon/manager_address.hpp"

namespace taskscope::stream::daemon {

namespace {

using Interfaces = std::map<std::string, TaskProperties>;

constexpr const char* kObjectManager = "org.freedesktop.DBus.ObjectManager";
// Listing 1000 tasks under software emulation takes a while.
constexpr auto kListTimeout = std::chrono::seconds(30);

}  // namespace

/// One GetTask in flight (see call_pool.hpp).
class ManagerClient::Call final : public sdbus::ProxyInterfaces<org::taskscope::Manager1_proxy> {
public:
    explicit Call(sdbus::IConnection& connection) : ProxyInterfaces(connection, kManager, kManagerPath) {}
    ~Call() { unregisterProxy(); }

    bool busy() const { return call_.busy(); }

    void start(const std::string& allocId, const std::string& task, TaskDone done) {
        call_.start(std::move(done), [&] { GetTask(allocId, task); });
    }

private:
    void onGetTaskReply(const std::string& json, const sdbus::Error* error) override {
        if (error) return call_.finish(common::fromBusError(*error, "ask taskscope-manager for the task"));
        call_.finish(wire::parseTaskJson(json));
    }
    // A call's proxy subscribes to no signal.
    void onTaskStarted(const std::string&, const std::string&, const sdbus::ObjectPath&, const uint32_t&) override {}
    void onTaskStateChanged(const std::string&, const std::string&, const std::string&) override {}
    void onTaskExited(const std::string&, const std::string&, const int32_t&, const int32_t&, const bool&) override {}
    void onDanglingScopeStopped(const std::string&, const bool&) override {}
    void onNetworkCreated(const std::string&, const std::string&) override {}
    void onNetworkDestroyed(const std::string&) override {}

    InFlight<TaskDone> call_;
};

/// The manager's task signals, subscribed once.
class ManagerClient::Signals final
    : public sdbus::ProxyInterfaces<org::taskscope::Manager1_proxy, sdbus::ObjectManager_proxy> {
public:
    Signals(sdbus::IConnection& connection, ManagerEvents& events)
        : ProxyInterfaces(connection, kManager, kManagerPath), events_(events) {
        registerProxy();
    }
    ~Signals() { unregisterProxy(); }

private:
    void onTaskStarted(const std::string&, const std::string&, const sdbus::ObjectPath&, const uint32_t&) override {}
    void onTaskStateChanged(const std::string& allocId, const std::string& task, const std::string& state) override {
        events_.taskStateChanged(allocId, task, state);
    }
    void onTaskExited(const std::string& allocId, const std::string& task, const int32_t&, const int32_t&,
                      const bool&) override {
        events_.taskExited(allocId, task);
    }
    void onDanglingScopeStopped(const std::string&, const bool&) override {}
    void onNetworkCreated(const std::string&, const std::string&) override {}
    void onNetworkDestroyed(const std::string&) override {}
    void onInterfacesAdded(const sdbus::ObjectPath& path, const Interfaces& interfaces) override {
        const auto it = interfaces.find(org::taskscope::Task1_proxy::INTERFACE_NAME);
        if (it != interfaces.end()) events_.taskAdded(path, it->second);
    }
    void onInterfacesRemoved(const sdbus::ObjectPath& path, const std::vector<std::string>& interfaces) override {
        if (std::find(interfaces.begin(), interfaces.end(), org::taskscope::Task1_proxy::INTERFACE_NAME) !=
            interfaces.end())
            events_.taskRemoved(path);
    }
    // Never called: this proxy makes no calls.
    void onGetTaskReply(const std::string&, const sdbus::Error*) override {}

    ManagerEvents& events_;
};

ManagerClient::ManagerClient(sdbus::IConnection& connection)
    : connection_(connection),
      calls_([&connection] { return std::make_unique<Call>(connection); }),
      objects_(sdbus::createProxy(connection, kManager, kManagerPath)) {
    objects_->finishRegistration();
}

ManagerClient::~ManagerClient() = default;

void ManagerClient::getTask(const std::string& allocId, const std::string& task, TaskDone done) {
    calls_.idle().start(allocId, task, std::move(done));
}

void ManagerClient::listTasks(ListDone done) {
    // sdbus-c++ 1.2's ObjectManager_proxy has only a blocking GetManagedObjects.
    objects_->callMethodAsync("GetManagedObjects")
        .onInterface(kObjectManager)
        .withTimeout(kListTimeout)
        .uponReplyInvoke([done = std::move(done)](const sdbus::Error* error,
                                                  const std::map<sdbus::ObjectPath, Interfaces>& objects) {
            if (error) return done(common::fromBusError(*error, "list the tasks of taskscope-manager"));
            TaskObjects tasks;
            for (const auto& [path, interfaces] : objects)
                if (const auto it = interfaces.find(org::taskscope::Task1_proxy::INTERFACE_NAME);
                    it != interfaces.end())
                    tasks.emplace(path, it->second);
            done(std::move(tasks));
        });
}

void ManagerClient::listen(ManagerEvents& events) {
    signals_ = std::make_unique<Signals>(connection_, events);
}

}  // namespace taskscope::stream::daemon
