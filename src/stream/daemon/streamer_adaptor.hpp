#pragma once
// The streamer's D-Bus face (dbus/org.taskscope.Streamer1.xml): converts
// types and errors, nothing more.

#include <sdbus-c++/sdbus-c++.h>

#include <string>

#include "dbus/streamer1_adaptor.h"
#include "stream/daemon/manager_client.hpp"
#include "stream/logs/streamer.hpp"

namespace taskscope::stream::daemon {

inline constexpr const char* kStreamerPath = "/org/taskscope/Streamer1";

class StreamerObject final
    : public sdbus::AdaptorInterfaces<org::taskscope::Streamer1_adaptor, sdbus::Properties_adaptor>,
      public logs::StreamerEvents {
public:
    StreamerObject(sdbus::IConnection& connection, logs::Streamer& streamer, ManagerClient& manager,
                   std::string version);
    ~StreamerObject();
    StreamerObject(const StreamerObject&) = delete;
    StreamerObject& operator=(const StreamerObject&) = delete;

    // logs::StreamerEvents
    void logsComplete(const std::string& allocId, const std::string& task) override;
    void tasksChanged() override;

private:
    void ReadLogs(sdbus::Result<sdbus::UnixFd>&& result, std::string allocId, std::string task, std::string stream,
                  std::string origin, int64_t offset, bool follow) override;
    std::tuple<bool, uint64_t, uint64_t, uint64_t> GetJournalCopy(const std::string& allocId,
                                                                  const std::string& task) override;
    std::string Version() override { return version_; }
    uint32_t Tasks() override { return streamer_.taskCount(); }

    logs::Streamer& streamer_;
    ManagerClient& manager_;
    std::string version_;
};

}  // namespace taskscope::stream::daemon
