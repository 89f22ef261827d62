#pragma once
// SystemdClient (asynchronous, for the loop) and BlockingSystemd (for
// startup and tools) over sdbus-c++, on a connection of its own.

#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "client/proxies.hpp"
#include "common/event_loop.hpp"
#include "common/sdbus_compat.hpp"
#include "scope/systemd_client.hpp"

namespace taskscope::scope {

class SdbusSystemdClient final : public SystemdClient, public BlockingSystemd {
public:
    /// Uses `connection` (the system bus in production). The caller's event
    /// loop must dispatch it. The synchronous job calls (startScope,
    /// stopUnit) pump it directly and so may run completions of
    /// asynchronous calls: a program uses one kind or the other (the
    /// manager only the asynchronous ones, tools the synchronous ones).
    /// `loop` times out asynchronous jobs; without it they have no timeout.
    explicit SdbusSystemdClient(sdbus::IConnection& connection,
                                std::chrono::milliseconds jobTimeout = std::chrono::seconds(90),
                                common::EventLoop* loop = nullptr);
    ~SdbusSystemdClient() override;

    void startScopeAsync(const std::string& unit, const std::vector<uint32_t>& pids, const UnitProperties& properties,
                         const AuxUnits& aux, Completion done) override;
    void startSliceAsync(const std::string& unit, const UnitProperties& properties, Completion done) override;
    void stopUnitAsync(const std::string& unit, Completion done) override;
    void setUnitPropertiesAsync(const std::string& unit, const UnitProperties& properties, Completion done) override;

    common::Result<void> startScope(const std::string& unit, const std::vector<uint32_t>& pids,
                                    const UnitProperties& properties) override;
    void killUnitAsync(const std::string& unit, const std::string& whom, int signal, Completion done) override;
    void freezeUnitAsync(const std::string& unit, Completion done) override;
    void thawUnitAsync(const std::string& unit, Completion done) override;
    void resetFailedUnitAsync(const std::string& unit, Completion done) override;
    void unitStateAsync(const std::string& unit, StateCompletion done) override;
    void controlGroupAsync(const std::string& unit, ValueCompletion<std::string> done) override;
    void unitInfoAsync(const std::string& unit, ValueCompletion<UnitInfo> done) override;
    void listUnitsAsync(const std::string& pattern, ValueCompletion<std::vector<std::string>> done) override;
    void roundTripAsync(const std::string& unit, Completion done) override;
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

    /// Hands a scope's processes to systemd as pidfds (the PIDFDs property)
    /// instead of PIDs: set by the manager once the running systemd is
    /// known to take them (manager/daemon/systemd_support.hpp), never at build time.
    void usePidfds(bool on) { pidfds_ = on; }
    bool usesPidfds() const { return pidfds_; }

private:
    /// The scope's processes as StartTransientUnit takes them: pidfds where
    /// systemd takes them, so that it adopts those very processes even if
    /// one died and its PID was reused meanwhile; PIDs otherwise (and when
    /// a pidfd cannot be had: the process is gone, systemd then says so).
    sdbus::Struct<std::string, sdbus::Variant> processesProperty(const std::vector<uint32_t>& pids) const;

    common::Result<void> startScopeOnce(const std::string& unit, const std::vector<uint32_t>& pids,
                                        const UnitProperties& properties);
    /// Enqueues a job and waits for its JobRemoved; anything but "done" fails.
    common::Result<void> runJob(const std::string& unit, const std::string& what,
                                const std::function<sdbus::ObjectPath()>& enqueue);
    common::Result<std::string> waitForJob(const std::string& unit, const sdbus::ObjectPath& job);
    void onJobRemoved(const sdbus::ObjectPath& job, const std::string& unit, const std::string& result);

    /// Sends a call now, or once fewer than kMaxInFlight are unanswered:
    /// the bus limits a connection's pending replies, and systemd answers
    /// them one by one anyway.
    void issue(std::function<void()> send);
    void replied();
    /// A call that returns a job: `send` makes the call with the reply
    /// handler it is given; `done` gets the job's JobRemoved result.
    using JobReply = std::function<void(sdbus_compat::ReplyError, sdbus::ObjectPath)>;
    /// `method`(unit, mode) of the manager interface (StartUnit, StopUnit), its job waited for.
    void unitJobAsync(const std::string& method, const std::string& unit, const std::string& mode,
                      const std::string& what, Completion done);
    void jobAsync(const std::string& unit, const std::string& what, std::function<void(JobReply)> send,
                  Completion done, std::function<void()> accepted = {});
    void finishJob(const std::string& job, const std::string& result);
    common::Result<sdbus::Variant> unitProperty(const std::string& unit, const std::string& interface,
                                                const std::string& property);
    /// The unit's object path (GetUnit), asynchronously.
    void unitPathAsync(const std::string& unit, ValueCompletion<sdbus::ObjectPath> done);
    /// Every property of `interface` of the unit (GetAll), asynchronously.
    using Properties = std::map<std::string, sdbus::Variant>;
    void unitPropertiesAsync(const std::string& unit, const std::string& interface, ValueCompletion<Properties> done);

    sdbus::IConnection& connection_;
    std::chrono::milliseconds jobTimeout_;
    bool pidfds_ = false;
    std::unique_ptr<client::SystemdManagerProxy> manager_;
    // Units with a job we wait for; JobRemoved of other units is ignored so
    // this map cannot grow with other clients' jobs.
    std::set<std::string> awaited_;
    std::map<std::string, std::string> finishedJobs_;  // job path -> result

    common::EventLoop* loop_;
    struct PendingJob {
        std::string unit;
        std::string what;
        Completion done;
        uint64_t timer = 0;
    };
    std::map<std::string, PendingJob> jobs_;  ///< by job path: replied, waiting for JobRemoved
    /// Units with a job call whose reply has not come yet, and the results
    /// of their jobs that ended before it (systemd may finish a job first).
    std::map<std::string, int> calling_;
    std::map<std::string, std::pair<std::string, std::string>> earlyJobs_;  // job path -> unit, result
    static constexpr size_t kMaxInFlight = 64;
    size_t inFlight_ = 0;
    std::deque<std::function<void()>> waiting_;
};

/// Maps a D-Bus error from systemd to a named taskscope error.
common::Error systemdError(const sdbus::Error& e, const std::string& what);

}  // namespace taskscope::scope
