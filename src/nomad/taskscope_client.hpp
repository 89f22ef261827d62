#pragma once
// taskscope's D-Bus API as the driver uses it: the manager
// (org.taskscope.Manager1) and the streamer (Stats1, Exec1), through the
// proxies generated from dbus/*.xml. One Client owns one bus connection
// and is used by one thread at a time: gRPC serves calls on a pool of
// threads, so every call makes (or takes) a client of its own, never a
// connection shared across threads. Failures come back as Errors named
// like taskscope's (NoSuchTask, InvalidSpec, ...; NoManager when the bus
// or the daemon cannot be reached).

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

namespace sdbus {
class IConnection;
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
    std::string output;  ///< stdout and stderr together, in the order written
};

class Client {
public:
    /// The system bus, or TASKSCOPE_BUS_ADDRESS when set (the bus tier).
    static common::Result<std::unique_ptr<Client>> connect();
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    common::Result<void> startTask(const std::string& alloc, const std::string& task, const std::string& specJson);
    /// GetTask's JSON object.
    common::Result<nlohmann::json> getTask(const std::string& alloc, const std::string& task);
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
    common::Result<ExecOutput> execOnce(const std::string& alloc, const std::string& task,
                                        const std::vector<std::string>& command, uint32_t timeoutMs,
                                        uint32_t maxOutput);

private:
    explicit Client(std::unique_ptr<sdbus::IConnection> conn);
    std::unique_ptr<sdbus::IConnection> conn_;
};

/// For exit codes: a task's exit as GetTask's JSON states it, or nullopt
/// while it runs.
std::optional<ExitStatus> exitOf(const nlohmann::json& task);

}  // namespace taskscope::nomad
