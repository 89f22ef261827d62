#pragma once
// The exec service's view of the bus: the manager (GetTask), systemd
// (AttachProcessesToUnit), and the callers' presence (NameOwnerChanged).
// All asynchronous: the streamer's loop never waits for a reply.

#include <sdbus-c++/sdbus-c++.h>

#include <functional>
#include <memory>
#include <string>

#include "stream/exec/exec_service.hpp"

namespace taskscope::stream::daemon {

/// org.taskscope.Manager1.GetTask; the manager's named errors pass through.
class SdbusTaskDirectory final : public exec::TaskDirectory {
public:
    explicit SdbusTaskDirectory(sdbus::IConnection& connection);
    void getTask(const std::string& allocId, const std::string& task,
                 std::function<void(common::Result<std::string>)> done) override;

private:
    std::unique_ptr<sdbus::IProxy> proxy_;
};

/// org.freedesktop.systemd1.Manager.AttachProcessesToUnit(unit, "", [pid]);
/// a refusal is SystemdFailed.
class SdbusScopeAttacher final : public exec::ScopeAttacher {
public:
    explicit SdbusScopeAttacher(sdbus::IConnection& connection);
    void attach(const std::string& unit, pid_t pid, std::function<void(common::Result<void>)> done) override;

private:
    std::unique_ptr<sdbus::IProxy> proxy_;
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
