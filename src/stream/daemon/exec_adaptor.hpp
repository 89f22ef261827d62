#pragma once
// org.taskscope.Exec1 on the bus (dbus/org.taskscope.Exec1.xml), served at
// the streamer's path beside org.taskscope.Streamer1: converts types and
// errors for exec::ExecService, nothing more.

#include <sdbus-c++/sdbus-c++.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "dbus/exec1_adaptor.h"
#include "stream/daemon/exec_bus.hpp"
#include "stream/daemon/manager_client.hpp"
#include "stream/exec/exec_service.hpp"

namespace taskscope::stream::daemon {

class ExecObject final : public sdbus::AdaptorInterfaces<org::taskscope::Exec1_adaptor, sdbus::Properties_adaptor>,
                         public exec::ExecEvents {
public:
    ExecObject(sdbus::IConnection& connection, exec::ExecService& service);
    ~ExecObject();
    ExecObject(const ExecObject&) = delete;
    ExecObject& operator=(const ExecObject&) = delete;

    // exec::ExecEvents
    void execExited(uint64_t session, const std::string& allocId, const std::string& task,
                    const exec::ExecResult& result) override;
    void sessionsChanged() override;

private:
    void StartExec(sdbus::Result<uint64_t, std::vector<sdbus::UnixFd>>&& result, std::string allocId, std::string task,
                   std::vector<std::string> command, std::map<std::string, std::string> env, bool tty, uint16_t rows,
                   uint16_t cols) override;
    void ResizeExec(const uint64_t& session, const uint16_t& rows, const uint16_t& cols) override;
    void WaitExec(sdbus::Result<int32_t, int32_t>&& result, uint64_t session) override;
    void ExecOnce(sdbus::Result<int32_t, int32_t, std::vector<uint8_t>, bool>&& result, std::string allocId,
                  std::string task, std::vector<std::string> command, std::map<std::string, std::string> env,
                  uint32_t timeoutMs, uint32_t maxOutput) override;

    std::vector<sdbus::Struct<uint64_t, std::string, std::string, bool>> Sessions() override;

    std::string sender() const;

    exec::ExecService& service_;
};

/// Exec1 wired up for the daemon: the manager and systemd clients, the
/// service, its bus object and the watch on callers leaving the bus.
class ExecServer {
public:
    ExecServer(common::EventLoop& loop, sdbus::IConnection& connection, ManagerClient& manager,
               exec::ExecServiceOptions options);
    ExecServer(const ExecServer&) = delete;
    ExecServer& operator=(const ExecServer&) = delete;

    /// Takes over the sessions a streamer before us left (ExecService::restore)
    /// and hangs up those whose callers have left the bus meanwhile.
    void restore(std::map<std::string, common::UniqueFd> stored);

private:
    sdbus::IConnection& connection_;
    SdbusScopeAttacher scopes_;
    exec::ExecService service_;
    ExecObject object_;
    BusClientWatch clients_;
};

}  // namespace taskscope::stream::daemon
