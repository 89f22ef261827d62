#include "stream/daemon/exec_bus.hpp"

#include <chrono>
#include <cstdint>
#include <vector>

#include "common/bus_error.hpp"
#include "stream/daemon/manager_address.hpp"

namespace taskscope::stream::daemon {

namespace {

constexpr const char* kSystemd = "org.freedesktop.systemd1";
constexpr const char* kSystemdPath = "/org/freedesktop/systemd1";
constexpr const char* kSystemdManager = "org.freedesktop.systemd1.Manager";
constexpr const char* kErrorPrefix = common::kBusErrorPrefix;
constexpr auto kTimeout = std::chrono::seconds(25);

}  // namespace

SdbusTaskDirectory::SdbusTaskDirectory(sdbus::IConnection& connection)
    : proxy_(sdbus::createProxy(connection, kManager, kManagerPath)) {
    proxy_->finishRegistration();
}

void SdbusTaskDirectory::getTask(const std::string& allocId, const std::string& task,
                                 std::function<void(common::Result<std::string>)> done) {
    proxy_->callMethodAsync("GetTask")
        .onInterface(kManager)
        .withTimeout(kTimeout)
        .withArguments(allocId, task)
        .uponReplyInvoke([done = std::move(done)](const sdbus::Error* error, const std::string& json) {
            if (!error) return done(json);
            const auto& name = error->getName();
            if (name.rfind(kErrorPrefix, 0) == 0)
                return done(
                    common::makeError(name.substr(std::char_traits<char>::length(kErrorPrefix)), error->getMessage()));
            done(common::makeError("Internal",
                                   "ask taskscope-manager for the task: " + name + ": " + error->getMessage()));
        });
}

SdbusScopeAttacher::SdbusScopeAttacher(sdbus::IConnection& connection)
    : proxy_(sdbus::createProxy(connection, kSystemd, kSystemdPath)) {
    proxy_->finishRegistration();
}

void SdbusScopeAttacher::attach(const std::string& unit, pid_t pid, std::function<void(common::Result<void>)> done) {
    proxy_->callMethodAsync("AttachProcessesToUnit")
        .onInterface(kSystemdManager)
        .withTimeout(kTimeout)
        .withArguments(unit, std::string(), std::vector<uint32_t>{static_cast<uint32_t>(pid)})
        .uponReplyInvoke([done = std::move(done), unit](const sdbus::Error* error) {
            if (!error) return done({});
            done(common::makeError("SystemdFailed", "systemd did not move the child into " + unit + ": " +
                                                        error->getName() + ": " + error->getMessage()));
        });
}

BusClientWatch::BusClientWatch(sdbus::IConnection& connection, std::function<void(const std::string&)> gone)
    : match_(connection.addMatch("type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                                 "interface='org.freedesktop.DBus',member='NameOwnerChanged'",
                                 [gone = std::move(gone)](sdbus::Message& msg) {
                                     std::string name, oldOwner, newOwner;
                                     msg >> name >> oldOwner >> newOwner;
                                     if (!name.empty() && name[0] == ':' && newOwner.empty()) gone(name);
                                 })) {}

}  // namespace taskscope::stream::daemon
