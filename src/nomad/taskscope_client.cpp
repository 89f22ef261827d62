// The driver's client of the manager and the streamer over D-Bus
// (taskscope_client.hpp).
#include "nomad/taskscope_client.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <type_traits>
#include <sdbus-c++/sdbus-c++.h>

#include "common/error_names.hpp"
#include "common/sdbus_compat.hpp"

#include "client/proxies.hpp"
#include "nomad/start_fate.hpp"

namespace taskscope::nomad {

namespace errors = common::errors;

namespace {

using common::makeError;
using common::Result;

constexpr const char* kErrorPrefix = "org.taskscope.Error.";
// Idle clients kept for the next calls: gRPC's pool rarely runs more
// calls at once, and an idle connection still receives the signals it
// subscribed to (drained when it is taken again).
constexpr size_t kMaxIdleClients = 4;

// A bus error as an Error named like taskscope's; errors of the bus itself
// (no such name, no reply, access denied) say the daemon is not reachable.
common::Error fromBus(const sdbus::Error& e, const std::string& what) {
    const std::string& name = e.getName();
    if (name.rfind(kErrorPrefix, 0) == 0) return makeError(name.substr(std::strlen(kErrorPrefix)), what + ": " + e.getMessage());
    return makeError(errors::kNoManager, what + ": " + name + ": " + e.getMessage());
}

bool isTimeout(const sdbus::Error& e) {
    return e.getName() == "org.freedesktop.DBus.Error.NoReply" || e.getName() == "org.freedesktop.DBus.Error.Timeout";
}

// An error of the connection itself (sdbus-c++ names errno errors
// "System.Error.<E...>"), after which it is of no further use.
bool isConnectionError(const sdbus::Error& e) {
    return e.getName().rfind("System.Error.", 0) == 0 || e.getName() == "org.freedesktop.DBus.Error.Disconnected";
}

// Waits for traffic on the connection and dispatches it, at most `ms`.
void pumpOnce(sdbus::IConnection& conn, int ms) {
    if (sdbus_compat::processPending(conn)) return;
    sdbus_compat::pollBus(conn, ms);
}

std::mutex gPoolMu;
std::vector<std::unique_ptr<Client>> gPool;

}  // namespace

// The manager's and the streamer's proxies (client/proxies.hpp), with what
// a client waits for.
class ManagerProxy final : public client::ManagerProxy {
public:
    explicit ManagerProxy(sdbus::IConnection& c) : client::ManagerProxy(c) {
        on.getTaskReply = [this](const std::string& json, sdbus_compat::ReplyError e) {
            if (e)
                error = *e;
            else
                reply = json;
        };
        on.taskExited = [this](const std::string& alloc, const std::string& task, int32_t code, int32_t sig,
                               bool oom) {
            if (!watchAlloc.empty() && alloc == watchAlloc && task == watchTask) exited = ExitStatus{code, sig, oom};
        };
        on.taskStarted = [this](const std::string& alloc, const std::string& task, const sdbus::ObjectPath&,
                                uint32_t) {
            if (fate) fate->heardStarted(alloc, task);
        };
        on.taskStateChanged = [this](const std::string& alloc, const std::string& task, const std::string& state) {
            if (fate) fate->heardStateChanged(alloc, task, state);
        };
        on.taskStartFailed = [this](const std::string& alloc, const std::string& task, const std::string& name) {
            if (fate) fate->heardStartFailed(alloc, task, name);
        };
    }

    std::string watchAlloc, watchTask;
    std::optional<ExitStatus> exited;
    /// The start whose answer was lost, while the driver waits for its fate.
    std::optional<StartFate> fate;
    std::optional<std::string> reply;
    std::optional<sdbus::Error> error;
};

class StatsProxy final : public client::StatsProxy {
public:
    using client::StatsProxy::StatsProxy;
};

class ExecProxy final : public client::ExecProxy {
public:
    using client::ExecProxy::ExecProxy;
};

namespace {

// GetTask is asynchronous in the generated proxy (the streamer calls it
// from its event loop): send it and pump until its reply.
// Its reply read by the one reader of GetTask (wire/task_json.hpp).
Result<wire::TaskInfo> getTaskWith(sdbus::IConnection& conn, ManagerProxy& m, const std::string& alloc,
                                   const std::string& task) {
    m.reply.reset();
    m.error.reset();
    m.GetTask(alloc, task);
    while (!m.reply && !m.error) pumpOnce(conn, 1000);
    if (m.error) throw *m.error;
    return wire::parseTaskJson(*m.reply);
}

// Reads what is there from `fd` into `out` (at most `cap` kept); false at
// end of file.
bool readSome(int fd, std::string& out, size_t cap) {
    char buf[16384];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) return errno == EINTR || errno == EAGAIN;
    if (n == 0) return false;
    if (out.size() < cap) out.append(buf, std::min(static_cast<size_t>(n), cap - out.size()));
    return true;
}

}  // namespace

std::optional<ExitStatus> exitOf(const wire::TaskInfo& t) {
    if (!t.finished()) return std::nullopt;
    return ExitStatus{t.exitCode.value_or(-1), t.signal, t.oomKilled};
}

void ClientRelease::operator()(Client* c) const {
    std::unique_ptr<Client> owned(c);
    if (!c || c->broken_) return;
    // Not waiting for anyone's exit any more.
    if (c->manager_) c->manager_->watchAlloc.clear();
    std::lock_guard lock(gPoolMu);
    if (gPool.size() < kMaxIdleClients) gPool.push_back(std::move(owned));
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
        return makeError(errors::kNoManager, "connect to the bus: " + e.getMessage());
    }
}

Result<ClientLease> Client::acquire() {
    std::unique_ptr<Client> c;
    {
        std::lock_guard lock(gPoolMu);
        if (!gPool.empty()) {
            c = std::move(gPool.back());
            gPool.pop_back();
        }
    }
    if (c) {
        c->drain();
        c->fresh_ = false;
        if (!c->broken_) return ClientLease(c.release());
    }
    auto fresh = connect();
    if (!fresh) return fresh.error();
    return ClientLease(fresh->release());
}

void Client::drain() {
    try {
        while (sdbus_compat::processPending(*conn_)) {
        }
    } catch (const sdbus::Error&) {
        broken_ = true;
    }
}

void Client::pump(int ms) {
    try {
        pumpOnce(*conn_, ms);
    } catch (const sdbus::Error&) {
        broken_ = true;
    }
}

ManagerProxy& Client::manager() {
    if (!manager_) manager_ = std::make_unique<ManagerProxy>(*conn_);
    return *manager_;
}

StatsProxy& Client::stats() {
    if (!stats_) stats_ = std::make_unique<StatsProxy>(*conn_);
    return *stats_;
}

ExecProxy& Client::exec() {
    if (!exec_) exec_ = std::make_unique<ExecProxy>(*conn_);
    return *exec_;
}

common::Error Client::fail(const sdbus::Error& e, const std::string& what) {
    if (isConnectionError(e)) broken_ = true;
    return fromBus(e, what);
}

template <typename T, typename F>
Result<T> Client::guard(const char* what, F&& call) {
    try {
        if constexpr (std::is_void_v<T>) {
            call();
            return {};
        } else {
            return call();
        }
    } catch (const sdbus::Error& e) {
        return fail(e, what);
    }
}

Result<void> Client::startTask(const std::string& alloc, const std::string& task, const std::string& specJson) {
    try {
        manager().StartTask(alloc, task, specJson);
        return {};
    } catch (const sdbus::Error& e) {
        if (!isTimeout(e)) return fail(e, "StartTask");
        // No answer within the bus's method timeout (sd-bus's default, 25 s:
        // systemd src/libsystemd/sd-bus/bus-internal.h BUS_DEFAULT_TIMEOUT),
        // on a node too busy to answer in time. The start may still be
        // under way, or be over either way: Nomad must hear its real fate,
        // never "failed" for a task that runs (it would start it again,
        // elsewhere too), so the manager is asked until it says (issue 48).
        return startFate(alloc, task, e);
    }
}

Result<void> Client::startFate(const std::string& alloc, const std::string& task, const sdbus::Error& unanswered) {
    // The manager's own bound on a start (start_timeout_ms) is far below
    // this; past it the bus itself is not answering.
    constexpr auto kWaitFor = std::chrono::minutes(3);
    const auto until = std::chrono::steady_clock::now() + kWaitFor;
    const std::string lost = "StartTask: " + unanswered.getName() + ": " + unanswered.getMessage();
    // The proxy's matches on the manager's signals have been in place since
    // it was made, before the StartTask: whatever ended the start since is
    // heard, and what ended it before is what GetTask says, asked once.
    auto& m = manager();
    m.fate.emplace(alloc, task);
    auto info = getTask(alloc, task);
    if (!info && info.error().name == errors::kNoManager && broken_) {
        m.fate.reset();
        return info.error();
    }
    m.fate->heardTask(info);
    while (!m.fate->known() && std::chrono::steady_clock::now() < until) pumpOnce(*conn_, 1000);
    // Asked once more before saying it is unknown: a signal the bus
    // dropped (a client whose queue overflowed) is the only way to get here
    // with the start over.
    if (!m.fate->known()) m.fate->heardTask(getTask(alloc, task));
    const auto verdict = m.fate->verdict(lost);
    m.fate.reset();
    if (!verdict && verdict.error().name == errors::kNoManager)
        return makeError(errors::kNoManager,
                         verdict.error().message + " after " +
                             std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kWaitFor).count()) +
                             " s of waiting for the manager's word");
    return verdict;
}

Result<wire::TaskInfo> Client::getTask(const std::string& alloc, const std::string& task) {
    return guard<wire::TaskInfo>("GetTask", [&] { return getTaskWith(*conn_, manager(), alloc, task); });
}

Result<void> Client::stopTask(const std::string& alloc, const std::string& task, const std::string& signal,
                              int64_t graceMs) {
    return guard<void>("StopTask", [&] { manager().StopTask(alloc, task, signal, graceMs); });
}

Result<void> Client::signalTask(const std::string& alloc, const std::string& task, const std::string& signal) {
    return guard<void>("SignalTask", [&] { manager().SignalTask(alloc, task, signal); });
}

Result<void> Client::forgetTask(const std::string& alloc, const std::string& task) {
    return guard<void>("ForgetTask", [&] { manager().ForgetTask(alloc, task); });
}

Result<ExitStatus> Client::waitExit(const std::string& alloc, const std::string& task,
                                    const std::function<bool()>& cancelled) {
    return guard<ExitStatus>("wait for the task", [&]() -> Result<ExitStatus> {
        // The proxy's match on TaskExited is in place before asking, so
        // the signal cannot slip by between the answer and the wait.
        auto& m = manager();
        m.watchAlloc = alloc;
        m.watchTask = task;
        m.exited.reset();
        auto t = getTaskWith(*conn_, m, alloc, task);
        if (!t) return t.error();
        if (auto e = exitOf(*t)) return *e;
        while (!m.exited) {
            if (cancelled()) return makeError(errors::kCancelled, "the wait was cancelled");
            pumpOnce(*conn_, 200);
        }
        m.watchAlloc.clear();
        return *m.exited;
    });
}

Result<std::pair<std::string, std::string>> Client::managerFacts() {
    using Facts = std::pair<std::string, std::string>;
    return guard<Facts>("read the manager's properties", [&]() -> Result<Facts> {
        auto& m = manager();
        return std::make_pair(m.Version(), m.CgroupVersion());
    });
}

Result<void> Client::createNetwork(const std::string& alloc, const std::string& specJson) {
    return guard<void>("CreateNetwork", [&] { manager().CreateNetwork(alloc, specJson); });
}

Result<void> Client::destroyNetwork(const std::string& alloc) {
    return guard<void>("DestroyNetwork", [&] { manager().DestroyNetwork(alloc); });
}

Result<nlohmann::json> Client::getNetwork(const std::string& alloc) {
    return guard<nlohmann::json>("GetNetwork", [&]() -> Result<nlohmann::json> {
        auto j = nlohmann::json::parse(manager().GetNetwork(alloc), nullptr, false);
        if (j.is_discarded() || !j.is_object())
            return makeError(errors::kInternal, "GetNetwork returned no JSON object");
        return j;
    });
}

Result<void> Client::setStatsInterval(const std::string& alloc, const std::string& task, int64_t intervalMs) {
    return guard<void>("SetTaskInterval", [&] { stats().SetTaskInterval(alloc, task, intervalMs); });
}

Result<StatsSample> Client::taskStats(const std::string& alloc, const std::string& task) {
    return guard<StatsSample>("GetTaskStats", [&]() -> Result<StatsSample> {
        const auto v = stats().GetTaskStats(alloc, task);
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
    });
}

Result<ExecSession> Client::startExec(const std::string& alloc, const std::string& task,
                                      const std::vector<std::string>& command,
                                      const std::map<std::string, std::string>& env, bool tty, uint16_t rows,
                                      uint16_t cols) {
    return guard<ExecSession>("StartExec", [&]() -> Result<ExecSession> {
        auto [session, fds] = exec().StartExec(alloc, task, command, env, tty, rows, cols);
        ExecSession out;
        out.id = session;
        for (auto& fd : fds) out.fds.emplace_back(fd.release());
        return out;
    });
}

Result<void> Client::resizeExec(uint64_t session, uint16_t rows, uint16_t cols) {
    return guard<void>("ResizeExec", [&] { exec().ResizeExec(session, rows, cols); });
}

Result<ExitStatus> Client::waitExec(uint64_t session) {
    for (;;) {
        try {
            auto [code, sig] = exec().WaitExec(session);
            return ExitStatus{code, sig, false};
        } catch (const sdbus::Error& e) {
            // The bus's call timeout, not the session's end: ask again
            // (ended sessions are kept for a late WaitExec).
            if (isTimeout(e)) continue;
            return fail(e, "WaitExec");
        }
    }
}

Result<ExecOutput> Client::execCapture(const std::string& alloc, const std::string& task,
                                       const std::vector<std::string>& command, uint32_t timeoutMs,
                                       uint32_t maxOutput) {
    // ExecOnce keeps stdout and stderr as one stream; Nomad's ExecTask
    // wants them apart, so this is a StartExec session without a terminal
    // whose two pipes are read to their ends.
    auto s = startExec(alloc, task, command, {}, false, 24, 80);
    if (!s) return s.error();
    if (s->fds.size() != 3) return makeError(errors::kInternal, "StartExec gave no three pipes");
    s->fds[0].reset();  // no input: the command reads end of file
    ExecOutput out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    pollfd p[2] = {{s->fds[1].get(), POLLIN, 0}, {s->fds[2].get(), POLLIN, 0}};
    std::string* sink[2] = {&out.stdoutText, &out.stderrText};
    int open = 2;
    while (open > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0)
            return makeError(errors::kTimeout, "the command did not end within " + std::to_string(timeoutMs) + " ms");
        if (::poll(p, 2, static_cast<int>(std::min<int64_t>(left, 1000))) < 0 && errno != EINTR)
            return makeError(errors::kInternal, std::string("poll: ") + std::strerror(errno));
        for (int i = 0; i < 2; ++i) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            if (!readSome(p[i].fd, *sink[i], maxOutput)) {
                p[i].fd = -1;
                --open;
            }
        }
    }
    auto exit = waitExec(s->id);
    if (!exit) return exit.error();
    out.status = *exit;
    return out;
}

}  // namespace taskscope::nomad
