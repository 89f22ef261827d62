#pragma once
// taskscope's D-Bus API as the driver uses it: the manager
// (org.taskscope.Manager1) and the streamer (Stats1, Exec1), through the
// proxies generated from dbus/*.xml. One Client owns one bus connection
// and its proxies, and is used by one thread at a time: gRPC serves calls
// on a pool of threads, so every call takes a client of its own from a
// pool (Client::acquire), never a connection shared across threads.
// Clients are kept because making one costs a connection, the bus's
// Hello and one AddMatch round trip per signal of each proxy: more than
// the StartTask it would serve (issue 16's overhead measure). Failures
// come back as Errors named like taskscope's (NoSuchTask, InvalidSpec,
// ...; NoManager when the bus or the daemon cannot be reached).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "wire/task_json.hpp"

namespace sdbus {
class IConnection;
class Error;
}

namespace taskscope::nomad {

struct ExitStatus {
    int exitCode = 0;
    int signal = 0;
    bool oomKilled = false;
};

/// One sample of Stats1 (see org.taskscope.Stats1.xml for the fields).
struct StatsSample {
    uint64_t timestampUs = 0;
    uint64_t measured = 0;
    uint64_t cpuUserUs = 0, cpuSystemUs = 0, cpuTotalUs = 0;
    double cpuPercent = 0, cpuUserPercent = 0, cpuSystemPercent = 0;
    uint64_t throttledPeriods = 0, throttledTimeUs = 0;
    uint64_t memoryRss = 0, memoryCache = 0, memorySwap = 0, memoryUsage = 0, memoryPeak = 0, memoryKernel = 0;
};

struct ExecSession {
    uint64_t id = 0;
    std::vector<common::UniqueFd> fds;  ///< tty: the master; else stdin (write), stdout, stderr
};

struct ExecOutput {
    ExitStatus status;
    std::string stdoutText;  ///< at most maxOutput bytes each; the rest is read and dropped
    std::string stderrText;
};

class ManagerProxy;
class StatsProxy;
class ExecProxy;
class Client;

/// Gives a pooled client back when its lease ends.
struct ClientRelease {
    void operator()(Client* c) const;
};
using ClientLease = std::unique_ptr<Client, ClientRelease>;

class Client {
public:
    /// A new connection to the system bus, or TASKSCOPE_BUS_ADDRESS when
    /// set (the bus tier), owned by the caller alone.
    static common::Result<std::unique_ptr<Client>> connect();
    /// A client from the pool (a new one when none is free); back to the
    /// pool when the lease ends, unless its connection failed.
    static common::Result<ClientLease> acquire();
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    /// Manager1.StartTask. Unanswered within the bus's timeout, the start's
    /// real fate is asked (GetTask) until it is known: success once the
    /// task ran, Overloaded when it is not there.
    common::Result<void> startTask(const std::string& alloc, const std::string& task, const std::string& specJson);
    /// GetTask's answer, through its one reader.
    common::Result<wire::TaskInfo> getTask(const std::string& alloc, const std::string& task);
    common::Result<void> stopTask(const std::string& alloc, const std::string& task, const std::string& signal,
                                  int64_t graceMs);
    common::Result<void> signalTask(const std::string& alloc, const std::string& task, const std::string& signal);
    common::Result<void> forgetTask(const std::string& alloc, const std::string& task);
    /// Blocks until the task has exited (at once when it has); Cancelled
    /// when `cancelled` turns true (checked at least every 200 ms).
    common::Result<ExitStatus> waitExit(const std::string& alloc, const std::string& task,
                                        const std::function<bool()>& cancelled);
    /// The manager's Version and CgroupVersion properties.
    common::Result<std::pair<std::string, std::string>> managerFacts();

    common::Result<void> setStatsInterval(const std::string& alloc, const std::string& task, int64_t intervalMs);
    common::Result<StatsSample> taskStats(const std::string& alloc, const std::string& task);

    common::Result<ExecSession> startExec(const std::string& alloc, const std::string& task,
                                          const std::vector<std::string>& command,
                                          const std::map<std::string, std::string>& env, bool tty, uint16_t rows,
                                          uint16_t cols);
    common::Result<void> resizeExec(uint64_t session, uint16_t rows, uint16_t cols);
    common::Result<ExitStatus> waitExec(uint64_t session);
    /// A command run to its end without a terminal, stdout and stderr
    /// apart. Timeout when `timeoutMs` passes: the caller must then drop
    /// this client (a Client of its own, from connect()), which hangs the
    /// session up (the streamer kills a session whose starter left).
    common::Result<ExecOutput> execCapture(const std::string& alloc, const std::string& task,
                                           const std::vector<std::string>& command, uint32_t timeoutMs,
                                           uint32_t maxOutput);

    /// Manager1's CreateNetwork, DestroyNetwork and GetNetwork (JSON).
    common::Result<void> createNetwork(const std::string& alloc, const std::string& specJson);
    common::Result<void> destroyNetwork(const std::string& alloc);
    common::Result<nlohmann::json> getNetwork(const std::string& alloc);

    /// The connection, for a caller that waits on it (the fingerprint's
    /// NameOwnerChanged match).
    sdbus::IConnection& connection() { return *conn_; }
    /// Dispatches whatever has arrived (signals queued while idle).
    void drain();
    /// Waits up to `ms` for traffic and dispatches it.
    void pump(int ms);
    /// The connection failed; the client is of no further use.
    bool broken() const { return broken_; }
    /// Made for this lease (connection, Hello and matches paid now), not
    /// taken from the pool.
    bool fresh() const { return fresh_; }

private:
    friend struct ClientRelease;
    explicit Client(std::unique_ptr<sdbus::IConnection> conn);
    ManagerProxy& manager();
    StatsProxy& stats();
    ExecProxy& exec();
    common::Error fail(const sdbus::Error& e, const std::string& what);
    /// A StartTask the bus left unanswered: the task's fate, asked.
    common::Result<void> startFate(const std::string& alloc, const std::string& task, const sdbus::Error& unanswered);
    /// Runs one call of the bus API: its sdbus::Error becomes an Error
    /// (fail) instead of an exception, the connection marked broken when
    /// it was the connection that failed.
    template <typename T, typename F>
    common::Result<T> guard(const char* what, F&& call);

    std::unique_ptr<sdbus::IConnection> conn_;
    std::unique_ptr<ManagerProxy> manager_;
    std::unique_ptr<StatsProxy> stats_;
    std::unique_ptr<ExecProxy> exec_;
    bool broken_ = false;  ///< the connection failed: not given back to the pool
    bool fresh_ = true;
};

/// For exit codes: a task's exit as GetTask states it, or nullopt while it runs.
std::optional<ExitStatus> exitOf(const wire::TaskInfo& task);

}  // namespace taskscope::nomad
