#include "nomad/taskscope_client.hpp"

#include <poll.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <sdbus-c++/sdbus-c++.h>

#include "dbus/exec1_proxy.h"
#include "dbus/manager1_proxy.h"
#include "dbus/stats1_proxy.h"

namespace taskscope::nomad {

namespace {

using common::makeError;
using common::Result;

constexpr const char* kManager = "org.taskscope.Manager1";
constexpr const char* kManagerPath = "/org/taskscope/Manager1";
constexpr const char* kStreamer = "org.taskscope.Streamer1";
constexpr const char* kStreamerPath = "/org/taskscope/Streamer1";
constexpr const char* kErrorPrefix = "org.taskscope.Error.";

// A bus error as an Error named like taskscope's; errors of the bus itself
// (no such name, no reply, access denied) say the daemon is not reachable.
common::Error fromBus(const sdbus::Error& e, const std::string& what) {
    const std::string& name = e.getName();
    if (name.rfind(kErrorPrefix, 0) == 0) return makeError(name.substr(std::strlen(kErrorPrefix)), what + ": " + e.getMessage());
    return makeError("NoManager", what + ": " + name + ": " + e.getMessage());
}

bool isTimeout(const sdbus::Error& e) {
    return e.getName() == "org.freedesktop.DBus.Error.NoReply" || e.getName() == "org.freedesktop.DBus.Error.Timeout";
}

// Waits for traffic on the connection and dispatches it, at most `ms`.
void pumpOnce(sdbus::IConnection& conn, int ms) {
    if (conn.processPendingRequest()) return;
    const auto pd = conn.getEventLoopPollData();
    pollfd p{pd.fd, pd.events, 0};
    int timeout = pd.getPollTimeout();
    if (timeout < 0 || timeout > ms) timeout = ms;
    ::poll(&p, 1, timeout);
}

class ManagerProxy final : public sdbus::ProxyInterfaces<org::taskscope::Manager1_proxy> {
public:
    explicit ManagerProxy(sdbus::IConnection& c) : ProxyInterfaces(c, kManager, kManagerPath) { registerProxy(); }
    ~ManagerProxy() { unregisterProxy(); }

    std::string watchAlloc, watchTask;
    std::optional<ExitStatus> exited;
    std::optional<std::string> reply;
    std::optional<sdbus::Error> error;

private:
    void onGetTaskReply(const std::string& json, const sdbus::Error* e) override {
        if (e)
            error = *e;
        else
            reply = json;
    }
    void onTaskStarted(const std::string&, const std::string&, const sdbus::ObjectPath&, const uint32_t&) override {}
    void onTaskStateChanged(const std::string&, const std::string&, const std::string&) override {}
    void onDanglingScopeStopped(const std::string&, const bool&) override {}
    void onNetworkCreated(const std::string&, const std::string&) override {}
    void onNetworkDestroyed(const std::string&) override {}
    void onTaskExited(const std::string& alloc, const std::string& task, const int32_t& code, const int32_t& sig,
                      const bool& oom) override {
        if (alloc == watchAlloc && task == watchTask) exited = ExitStatus{code, sig, oom};
    }
};

class StatsProxy final : public sdbus::ProxyInterfaces<org::taskscope::Stats1_proxy> {
public:
    explicit StatsProxy(sdbus::IConnection& c) : ProxyInterfaces(c, kStreamer, kStreamerPath) { registerProxy(); }
    ~StatsProxy() { unregisterProxy(); }

private:
    void onSamples(const std::vector<sdbus::Struct<std::string, std::string, uint64_t, uint64_t, uint64_t, uint64_t,
                                                   uint64_t, uint64_t, double, double, double, uint64_t, uint64_t,
                                                   uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                                                   uint64_t>>&) override {}
};

class ExecProxy final : public sdbus::ProxyInterfaces<org::taskscope::Exec1_proxy> {
public:
    explicit ExecProxy(sdbus::IConnection& c) : ProxyInterfaces(c, kStreamer, kStreamerPath) { registerProxy(); }
    ~ExecProxy() { unregisterProxy(); }

private:
    void onExecExited(const uint64_t&, const std::string&, const std::string&, const int32_t&, const int32_t&) override {}
};

// GetTask is asynchronous in the generated proxy (the streamer calls it
// from its event loop): send it and pump until its reply.
Result<nlohmann::json> getTaskWith(sdbus::IConnection& conn, ManagerProxy& m, const std::string& alloc,
                                   const std::string& task) {
    m.reply.reset();
    m.error.reset();
    try {
        m.GetTask(alloc, task);
    } catch (const sdbus::Error& e) {
        return fromBus(e, "GetTask");
    }
    while (!m.reply && !m.error) pumpOnce(conn, 1000);
    if (m.error) return fromBus(*m.error, "GetTask");
    auto j = nlohmann::json::parse(*m.reply, nullptr, false);
    if (j.is_discarded()) return makeError("Internal", "GetTask returned no JSON");
    return j;
}

}  // namespace

std::optional<ExitStatus> exitOf(const nlohmann::json& t) {
    const auto state = t.value("state", "");
    if (state != "exited" && state != "lost") return std::nullopt;
    ExitStatus s;
    s.exitCode = t.contains("exit_code") && t["exit_code"].is_number() ? t["exit_code"].get<int>() : -1;
    s.signal = t.contains("signal") && t["signal"].is_number() ? t["signal"].get<int>() : 0;
    s.oomKilled = t.value("oom_killed", false);
    return s;
}

Client::Client(std::unique_ptr<sdbus::IConnection> conn) : conn_(std::move(conn)) {}
Client::~Client() = default;

Result<std::unique_ptr<Client>> Client::connect() {
    try {
        std::unique_ptr<sdbus::IConnection> conn;
        if (const char* a = std::getenv("TASKSCOPE_BUS_ADDRESS"); a && *a)
            conn = sdbus::createSessionBusConnectionWithAddress(a);
        else
            conn = sdbus::createSystemBusConnection();
        return std::unique_ptr<Client>(new Client(std::move(conn)));
    } catch (const sdbus::Error& e) {
        return makeError("NoManager", "connect to the bus: " + e.getMessage());
    }
}

Result<void> Client::startTask(const std::string& alloc, const std::string& task, const std::string& specJson) {
    try {
        ManagerProxy m(*conn_);
        m.StartTask(alloc, task, specJson);
        return {};
    } catch (const sdbus::Error& e) {
        return fromBus(e, "StartTask");
    }
}

Result<nlohmann::json> Client::getTask(const std::string& alloc, const std::string& task) {
    try {
        ManagerProxy m(*conn_);
        return getTaskWith(*conn_, m, alloc, task);
    } catch (const sdbus::Error& e) {
        return fromBus(e, "GetTask");
    }
}

Result<void> Client::stopTask(const std::string& alloc, const std::string& task, const std::string& signal,
                              int64_t graceMs) {
    try {
        ManagerProxy m(*conn_);
        m.StopTask(alloc, task, signal, graceMs);
        return {};
    } catch (const sdbus::Error& e) {
        return fromBus(e, "StopTask");
    }
}

Result<void> Client::signalTask(const std::string& alloc, const std::string& task, const std::string& signal) {
    try {
        ManagerProxy m(*conn_);
        m.SignalTask(alloc, task, signal);
        return {};
    } catch (const sdbus::Error& e) {
        return fromBus(e, "SignalTask");
    }
}

Result<void> Client::forgetTask(const std::string& alloc, const std::string& task) {
    try {
        ManagerProxy m(*conn_);
        m.ForgetTask(alloc, task);
        return {};
    } catch (const sdbus::Error& e) {
        return fromBus(e, "ForgetTask");
    }
}

Result<ExitStatus> Client::waitExit(const std::string& alloc, const std::string& task,
                                    const std::function<bool()>& cancelled) {
    try {
        // Subscribed (the proxy's match on TaskExited) before asking, so the
        // signal cannot slip by between the answer and the wait.
        ManagerProxy m(*conn_);
        m.watchAlloc = alloc;
        m.watchTask = task;
        auto t = getTaskWith(*conn_, m, alloc, task);
        if (!t) return t.error();
        if (auto e = exitOf(*t)) return *e;
        while (!m.exited) {
            if (cancelled()) return makeError("Cancelled", "the wait was cancelled");
            pumpOnce(*conn_, 200);
        }
        return *m.exited;
    } catch (const sdbus::Error& e) {
        return fromBus(e, "wait for the task");
    }
}

Result<std::pair<std::string, std::string>> Client::managerFacts() {
    try {
        ManagerProxy m(*conn_);
        return std::make_pair(m.Version(), m.CgroupVersion());
    } catch (const sdbus::Error& e) {
        return fromBus(e, "read the manager's properties");
    }
}

Result<void> Client::setStatsInterval(const std::string& alloc, const std::string& task, int64_t intervalMs) {
    try {
        StatsProxy s(*conn_);
        s.SetTaskInterval(alloc, task, intervalMs);
        return {};
    } catch (const sdbus::Error& e) {
        return fromBus(e, "SetTaskInterval");
    }
}

Result<StatsSample> Client::taskStats(const std::string& alloc, const std::string& task) {
    try {
        StatsProxy s(*conn_);
        const auto v = s.GetTaskStats(alloc, task);
        StatsSample out;
        out.timestampUs = v.get<2>();
        out.measured = v.get<4>();
        out.cpuUserUs = v.get<5>();
        out.cpuSystemUs = v.get<6>();
        out.cpuTotalUs = v.get<7>();
        out.cpuPercent = v.get<8>();
        out.cpuUserPercent = v.get<9>();
        out.cpuSystemPercent = v.get<10>();
        out.throttledPeriods = v.get<11>();
        out.throttledTimeUs = v.get<12>();
        out.memoryRss = v.get<13>();
        out.memoryCache = v.get<14>();
        out.memorySwap = v.get<15>();
        out.memoryUsage = v.get<16>();
        out.memoryPeak = v.get<17>();
        out.memoryKernel = v.get<18>();
        return out;
    } catch (const sdbus::Error& e) {
        return fromBus(e, "GetTaskStats");
    }
}

Result<ExecSession> Client::startExec(const std::string& alloc, const std::string& task,
                                      const std::vector<std::string>& command,
                                      const std::map<std::string, std::string>& env, bool tty, uint16_t rows,
                                      uint16_t cols) {
    try {
        ExecProxy x(*conn_);
        auto [session, fds] = x.StartExec(alloc, task, command, env, tty, rows, cols);
        ExecSession out;
        out.id = session;
        for (auto& fd : fds) out.fds.emplace_back(fd.release());
        return out;
    } catch (const sdbus::Error& e) {
        return fromBus(e, "StartExec");
    }
}

Result<void> Client::resizeExec(uint64_t session, uint16_t rows, uint16_t cols) {
    try {
        ExecProxy x(*conn_);
        x.ResizeExec(session, rows, cols);
        return {};
    } catch (const sdbus::Error& e) {
        return fromBus(e, "ResizeExec");
    }
}

Result<ExitStatus> Client::waitExec(uint64_t session) {
    ExecProxy x(*conn_);
    for (;;) {
        try {
            auto [code, sig] = x.WaitExec(session);
            return ExitStatus{code, sig, false};
        } catch (const sdbus::Error& e) {
            // The bus's call timeout, not the session's end: ask again
            // (ended sessions are kept for a late WaitExec).
            if (isTimeout(e)) continue;
            return fromBus(e, "WaitExec");
        }
    }
}

Result<ExecOutput> Client::execOnce(const std::string& alloc, const std::string& task,
                                    const std::vector<std::string>& command, uint32_t timeoutMs, uint32_t maxOutput) {
    try {
        ExecProxy x(*conn_);
        auto [code, sig, output, truncated] = x.ExecOnce(alloc, task, command, {}, timeoutMs, maxOutput);
        (void)truncated;
        return ExecOutput{ExitStatus{code, sig, false}, std::string(output.begin(), output.end())};
    } catch (const sdbus::Error& e) {
        return fromBus(e, "ExecOnce");
    }
}

}  // namespace taskscope::nomad
