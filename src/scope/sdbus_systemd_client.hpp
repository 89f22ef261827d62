#pragma once
// SystemdClient over sdbus-c++, on a connection of its own.

#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "scope/systemd_client.hpp"

namespace taskscope::scope {

class SdbusSystemdClient final : public SystemdClient {
public:
    /// Uses `connection` (the system bus in production). The caller's event
    /// loop must dispatch it; job waits here also pump it directly, which
    /// is safe because signal handlers only record what they see.
    explicit SdbusSystemdClient(sdbus::IConnection& connection,
                                std::chrono::milliseconds jobTimeout = std::chrono::seconds(90));
    ~SdbusSystemdClient() override;

    /// Asks systemd to send JobRemoved and unit signals to us.
    common::Result<void> subscribe();

    common::Result<void> startScope(const std::string& unit, const std::vector<uint32_t>& pids,
                                    const UnitProperties& properties) override;
    common::Result<void> killUnit(const std::string& unit, const std::string& whom, int signal) override;
    common::Result<void> freezeUnit(const std::string& unit) override;
    common::Result<void> thawUnit(const std::string& unit) override;
    common::Result<void> stopUnit(const std::string& unit) override;
    common::Result<void> resetFailedUnit(const std::string& unit) override;
    common::Result<void> setUnitProperties(const std::string& unit, const UnitProperties& properties) override;
    common::Result<std::string> controlGroup(const std::string& unit) override;
    common::Result<UnitState> unitState(const std::string& unit) override;
    common::Result<UnitInfo> unitInfo(const std::string& unit) override;
    common::Result<std::vector<std::string>> listUnits(const std::string& pattern) override;
    common::Result<std::string> version() override;

private:
    class ManagerProxy;

    common::Result<void> startScopeOnce(const std::string& unit, const std::vector<uint32_t>& pids,
                                        const UnitProperties& properties);
    /// Enqueues a job and waits for its JobRemoved; anything but "done" fails.
    common::Result<void> runJob(const std::string& unit, const std::string& what,
                                const std::function<sdbus::ObjectPath()>& enqueue);
    common::Result<std::string> waitForJob(const std::string& unit, const sdbus::ObjectPath& job);
    void onJobRemoved(const sdbus::ObjectPath& job, const std::string& unit, const std::string& result);
    common::Result<sdbus::Variant> unitProperty(const std::string& unit, const std::string& interface,
                                                const std::string& property);

    sdbus::IConnection& connection_;
    std::chrono::milliseconds jobTimeout_;
    std::unique_ptr<ManagerProxy> manager_;
    // Units with a job we wait for; JobRemoved of other units is ignored so
    // this map cannot grow with other clients' jobs.
    std::set<std::string> awaited_;
    std::map<std::string, std::string> finishedJobs_;  // job path -> result
};

/// Maps a D-Bus error from systemd to a named taskscope error.
common::Error systemdError(const sdbus::Error& e, const std::string& what);

}  // namespace taskscope::scope
