#include "stream/daemon/manager_client.hpp"

#include <algorithm>
#include <chrono>

#include "client/proxies.hpp"
#include "common/bus_error.hpp"
#include "common/sdbus_compat.hpp"
#include "dbus/task1_proxy.h"
#include "stream/daemon/manager_address.hpp"

namespace taskscope::stream::daemon {

namespace {

using Interfaces = std::map<std::string, TaskProperties>;

constexpr const char* kObjectManager = "org.freedesktop.DBus.ObjectManager";
// Listing 1000 tasks under software emulation takes a while.
constexpr auto kListTimeout = std::chrono::seconds(30);

}  // namespace

/// One GetTask in flight (see call_pool.hpp), through a proxy of its own
/// that subscribes to no signal.
class ManagerClient::Call final {
public:
    explicit Call(sdbus::IConnection& connection) : manager_(connection, {}, client::Signals::Ignored, kManager) {
        manager_.on.getTaskReply = [this](const std::string& json, sdbus_compat::ReplyError error) {
            if (error) return call_.finish(common::fromBusError(*error, "ask taskscope-manager for the task"));
            call_.finish(wire::parseTaskJson(json));
        };
    }

    bool busy() const { return call_.busy(); }

    void start(const std::string& allocId, const std::string& task, TaskDone done) {
        call_.start(std::move(done), [&] { manager_.GetTask(allocId, task); });
    }

private:
    client::ManagerProxy manager_;
    InFlight<TaskDone> call_;
};

/// The manager's task signals, subscribed once.
class ManagerClient::Signals final {
public:
    Signals(sdbus::IConnection& connection, ManagerEvents& events) : manager_(connection, handlers(events), kManager) {}

private:
    static client::ManagerHandlers handlers(ManagerEvents& events) {
        client::ManagerHandlers on;
        on.taskStateChanged = [&events](const std::string& allocId, const std::string& task,
                                        const std::string& state) { events.taskStateChanged(allocId, task, state); };
        on.taskExited = [&events](const std::string& allocId, const std::string& task, int32_t, int32_t, bool) {
            events.taskExited(allocId, task);
        };
        on.interfacesAdded = [&events](const sdbus::ObjectPath& path, const Interfaces& interfaces) {
            const auto it = interfaces.find(org::taskscope::Task1_proxy::INTERFACE_NAME);
            if (it != interfaces.end()) events.taskAdded(path, it->second);
        };
        on.interfacesRemoved = [&events](const sdbus::ObjectPath& path, const std::vector<std::string>& interfaces) {
            if (std::find(interfaces.begin(), interfaces.end(), org::taskscope::Task1_proxy::INTERFACE_NAME) !=
                interfaces.end())
                events.taskRemoved(path);
        };
        return on;
    }

    client::ManagerObjectsProxy manager_;
};

ManagerClient::ManagerClient(sdbus::IConnection& connection)
    : connection_(connection),
      calls_([&connection] { return std::make_unique<Call>(connection); }),
      objects_(sdbus::createProxy(connection, sdbus_compat::ServiceName{kManager}, sdbus::ObjectPath{kManagerPath})) {
    sdbus_compat::finishRegistration(*objects_);
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
        .uponReplyInvoke([done = std::move(done)](sdbus_compat::ReplyError error,
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
