#pragma once
// The exec service's view of the bus beside the manager (ManagerClient):
// systemd (AttachProcessesToUnit) and the callers' presence
// (NameOwnerChanged). All asynchronous: the streamer's loop never waits
// for a reply.

#include <sdbus-c++/sdbus-c++.h>

#include <functional>
#include <memory>
#include <string>

#include "stream/daemon/call_pool.hpp"
#include "stream/exec/exec_service.hpp"

namespace taskscope::stream::daemon {

/// org.freedesktop.systemd1.Manager.AttachProcessesToUnit(unit, "", [pid]),
/// through the proxy generated from dbus/org.freedesktop.systemd1.Manager.xml;
/// a refusal is SystemdFailed.
class SdbusScopeAttacher final : public exec::ScopeAttacher {
public:
    explicit SdbusScopeAttacher(sdbus::IConnection& connection);
    ~SdbusScopeAttacher() override;
    SdbusScopeAttacher(const SdbusScopeAttacher&) = delete;
    SdbusScopeAttacher& operator=(const SdbusScopeAttacher&) = delete;

    void attach(const std::string& unit, pid_t pid, std::function<void(common::Result<void>)> done) override;

private:
    class Call;
    CallPool<Call> calls_;
};

/// Calls gone(name) when a unique bus name (a client) leaves the bus. One
/// match for all: it is in place before any session starts, so no leave
/// after a call arrived can be missed.
class BusClientWatch {
public:
    BusClientWatch(sdbus::IConnection& connection, std::function<void(const std::string&)> gone);

private:
    sdbus::Slot match_;
};

}  // namespace taskscope::stream::daemon
