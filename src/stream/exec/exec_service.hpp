#pragma once
// Exec sessions (org.taskscope.Exec1): commands started inside running
// tasks, interactive (StartExec) or run to their end with a deadline and
// capped output (ExecOnce). Everything runs on the streamer's event loop;
// the manager and systemd are asked asynchronously through the two small
// interfaces below, so the loop never waits for either and tests can fake
// them.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "stream/exec/exec_records.hpp"
#include "stream/exec/exec_session.hpp"
#include "wire/task_json.hpp"

namespace taskscope::stream::exec {

/// The manager: a task as its GetTask describes it, or its named error.
class TaskDirectory {
public:
    virtual ~TaskDirectory() = default;
    virtual void getTask(const std::string& allocId, const std::string& task,
                         std::function<void(common::Result<wire::TaskInfo>)> done) = 0;
};

/// systemd: moves a process into a unit's cgroup (AttachProcessesToUnit).
class ScopeAttacher {
public:
    virtual ~ScopeAttacher() = default;
    virtual void attach(const std::string& unit, pid_t pid, std::function<void(common::Result<void>)> done) = 0;
};

/// What the bus side publishes.
class ExecEvents {
public:
    virtual ~ExecEvents() = default;
    virtual void execExited(uint64_t session, const std::string& allocId, const std::string& task,
                            const ExecResult& result) = 0;
    /// The list of running sessions changed.
    virtual void sessionsChanged() = 0;
};

struct ExecServiceOptions {
    size_t maxSessions = 64;  ///< running and starting, both kinds
    size_t maxWaiters = 16;   ///< WaitExec calls pending on one session
    size_t maxKeptResults = 1024;
    std::chrono::milliseconds keepResults = std::chrono::minutes(10);
    /// After SIGHUP to a session whose caller left the bus, SIGKILL this much later.
    std::chrono::milliseconds hangupGrace = std::chrono::seconds(5);
    std::string proc = "/proc";
    /// taskscope-shim, whose --exec mode sets every command up (exec.c).
    std::string shimPath = TASKSCOPE_SHIM_DEFAULT;
    /// Where running sessions are recorded for the next streamer to take
    /// over (exec_records.hpp); empty: not recorded.
    std::string recordDir;
    /// Where their descriptors wait; null: systemd's fd store.
    DescriptorStore* descriptors = nullptr;
};

struct ExecRequest {
    std::string allocId;
    std::string task;
    std::vector<std::string> command;
    std::map<std::string, std::string> env;  ///< on top of the task's
    bool tty = false;
    uint32_t rows = 0;
    uint32_t cols = 0;
    std::string owner;  ///< the caller's unique bus name: its session ends when it leaves
};

struct ExecStarted {
    uint64_t session = 0;
    std::vector<common::UniqueFd> fds;  ///< tty: the master; else stdin (write), stdout, stderr (read)
};

struct SessionInfo {
    uint64_t session = 0;
    std::string allocId;
    std::string task;
    bool tty = false;
};

struct OnceResult {
    ExecResult result;
    std::vector<uint8_t> output;
    bool truncated = false;
};

class ExecService {
public:
    using StartDone = std::function<void(common::Result<ExecStarted>)>;
    using OnceDone = std::function<void(common::Result<OnceResult>)>;
    using WaitDone = ExecSession::WaitDone;

    ExecService(common::EventLoop& loop, TaskDirectory& tasks, ScopeAttacher& scopes, ExecServiceOptions options = {});
    ~ExecService();
    ExecService(const ExecService&) = delete;
    ExecService& operator=(const ExecService&) = delete;

    void attach(ExecEvents& events) { events_ = &events; }

    /// Starts an interactive session; done is called once, when the
    /// command was executed or could not be. Errors: InvalidArgument,
    /// Busy, NoSuchTask, NotRunning, NoSuchBinary, ExecFailed,
    /// SystemdFailed, Internal.
    void start(ExecRequest request, StartDone done);

    /// Runs a command to its end (request.tty is ignored); Timeout once
    /// timeoutMs have passed since the call, after the command's process
    /// group was killed and reaped.
    void once(ExecRequest request, uint32_t timeoutMs, uint32_t maxOutput, OnceDone done);

    /// NoSuchSession, InvalidArgument.
    common::Result<void> resize(uint64_t session, uint32_t rows, uint32_t cols);

    /// done gets the session's result once its command has exited (at once
    /// for one that ended lately). NoSuchSession, Busy.
    void wait(uint64_t session, WaitDone done);

    /// Takes over the sessions of a streamer that ran before: their records
    /// and the descriptors it left in systemd's fd store (every stored fd
    /// whose name parseExecFdName knows; the rest are not looked at). A
    /// session that ended meanwhile gets its result kept and ExecExited; a
    /// running one is watched through its keeper's status pipe and can be
    /// waited for, resized and hung up as before. Returns the callers of the
    /// running ones: those no longer on the bus must be passed to clientGone.
    std::vector<std::string> restore(std::map<std::string, common::UniqueFd> stored);

    /// A bus client left: hang up the sessions it started.
    void clientGone(const std::string& owner);

    /// Every session, starting or running, of both kinds.
    size_t activeSessions() const { return sessions_.size(); }
    /// The StartExec sessions whose commands run.
    std::vector<SessionInfo> runningSessions() const;

private:
    struct Pending;  // the reply a session owes its caller

    common::Result<uint64_t> admit(const ExecRequest& request, bool once);
    void resolve(uint64_t id, ExecRequest request);
    void onTask(uint64_t id, const ExecRequest& request, common::Result<wire::TaskInfo> task);
    common::Result<void> spawn(ExecSession& s, const ExecRequest& request, const wire::TaskInfo& task,
                               std::string& unit);
    void onAttached(uint64_t id, common::Result<void> result);
    void onReports(uint64_t id);
    void onChildExit(uint64_t id);
    void onKeeperExit(uint64_t id);
    void record(ExecSession& s);
    void forgetRecord(ExecSession& s);
    /// Its record and stored descriptors go (the terminal's too, if it had one).
    void dropRecord(uint64_t id, bool terminal);
    void onOutput(uint64_t id);
    void onDeadline(uint64_t id);
    void drainOutput(ExecSession& s);
    void running(ExecSession& s);
    void failStart(ExecSession& s, common::Error error);
    void finish(uint64_t id, int status);
    ExecSession* find(uint64_t id);

    common::EventLoop& loop_;
    TaskDirectory& tasks_;
    ScopeAttacher& scopes_;
    ExecServiceOptions options_;
    ExecEvents* events_ = nullptr;
    std::map<uint64_t, std::unique_ptr<ExecSession>> sessions_;
    std::map<uint64_t, std::unique_ptr<Pending>> pending_;
    ExecResults results_;
    SessionRecords records_;
    DescriptorStore& descriptors_;
    uint64_t nextId_ = 1;
    uint64_t reservedBelow_ = 1;  ///< session numbers below this may have been handed out
    // Replies from the manager or systemd may arrive after we are gone.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace taskscope::stream::exec
