#include "client/proxies.hpp"
#include "common/sdbus_compat.hpp"

namespace taskscope::client {

ManagerProxy::ManagerProxy(sdbus::IConnection& connection, ManagerHandlers handlers, Signals signals,
                           const std::string& name)
    : ManagerHandled(connection, std::move(handlers), name) {
    if (signals == Signals::Heard) registerProxy();
}
ManagerProxy::~ManagerProxy() { unregisterProxy(); }

ManagerObjectsProxy::ManagerObjectsProxy(sdbus::IConnection& connection, ManagerHandlers handlers,
                                         const std::string& name)
    : ManagerHandled(connection, std::move(handlers), name) {
    registerProxy();
}
ManagerObjectsProxy::~ManagerObjectsProxy() { unregisterProxy(); }

StreamerProxy::StreamerProxy(sdbus::IConnection& connection, Signals signals)
    : ProxyInterfaces(connection, sdbus_compat::ServiceName{kStreamerName}, sdbus::ObjectPath{kStreamerPath}) {
    if (signals == Signals::Heard) registerProxy();
}
StreamerProxy::~StreamerProxy() { unregisterProxy(); }

ExecProxy::ExecProxy(sdbus::IConnection& connection, Signals signals)
    : ProxyInterfaces(connection, sdbus_compat::ServiceName{kStreamerName}, sdbus::ObjectPath{kStreamerPath}) {
    if (signals == Signals::Heard) registerProxy();
}
ExecProxy::~ExecProxy() { unregisterProxy(); }

StatsProxy::StatsProxy(sdbus::IConnection& connection, Signals signals)
    : ProxyInterfaces(connection, sdbus_compat::ServiceName{kStreamerName}, sdbus::ObjectPath{kStreamerPath}) {
    if (signals == Signals::Heard) registerProxy();
}
StatsProxy::~StatsProxy() { unregisterProxy(); }

SystemdManagerProxy::SystemdManagerProxy(sdbus::IConnection& connection, Signals signals)
    : ProxyInterfaces(connection, sdbus_compat::ServiceName{kSystemdName}, sdbus::ObjectPath{kSystemdPath}) {
    if (signals == Signals::Heard) registerProxy();
}
SystemdManagerProxy::~SystemdManagerProxy() { unregisterProxy(); }

}  // namespace taskscope::client
