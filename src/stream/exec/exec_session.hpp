#pragma once
// One exec session (a command started in a task) and the bounded record of
// how ended sessions ended, for callers that ask after the fact.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "stream/exec/exec_output.hpp"
#include "stream/exec/exec_spawn.hpp"

namespace taskscope::stream::exec {

/// How a command ended: exitCode is its status, or 128 + the signal.
struct ExecResult {
    int exitCode = 0;
    int signal = 0;
};

/// ExecResult from a wait(2) status.
ExecResult resultFromStatus(int status);

/// The results of ended sessions: at most maxKept, none older than keep.
/// Pure: time is passed in.
class ExecResults {
public:
    using Clock = std::chrono::steady_clock;

    ExecResults(size_t maxKept, Clock::duration keep) : maxKept_(maxKept), keep_(keep) {}

    void add(uint64_t id, ExecResult result, Clock::time_point now);
    std::optional<ExecResult> find(uint64_t id, Clock::time_point now);
    size_t size() const { return byId_.size(); }

private:
    void prune(Clock::time_point now);

    size_t maxKept_;
    Clock::duration keep_;
    std::map<uint64_t, ExecResult> byId_;
    std::deque<std::pair<Clock::time_point, uint64_t>> order_;  // by time added
};

enum class ExecPhase {
    Resolving,  ///< asking the manager for the task
    Attaching,  ///< child held, asking systemd to move it into the scope
    Starting,   ///< released, on its way to exec
    Running,    ///< the command runs
};

/// A session's state. ExecService drives it; this class owns its file
/// descriptors and its event-loop registrations, and knows how to signal
/// its processes.
class ExecSession {
public:
    using WaitDone = std::function<void(common::Result<ExecResult>)>;

    ExecSession(common::EventLoop& loop, uint64_t id, std::string allocId, std::string task, std::string owner,
                bool once);
    ~ExecSession();
    ExecSession(const ExecSession&) = delete;
    ExecSession& operator=(const ExecSession&) = delete;

    uint64_t id() const { return id_; }
    const std::string& allocId() const { return allocId_; }
    const std::string& task() const { return task_; }
    const std::string& owner() const { return owner_; }
    bool once() const { return once_; }

    ExecPhase phase = ExecPhase::Resolving;
    std::string program;  ///< the command's argv[0], for messages
    bool tty = false;
    HeldChild child;
    /// Taken over from a streamer that restarted: not our child; its end is
    /// seen on its pidfd (childWatch), its status read from child.status.
    bool adopted = false;
    /// Its record and descriptors are kept for a streamer that restarts.
    bool recorded = false;
    SpawnReports reports;
    bool reaped = false;
    common::UniqueFd master;                  ///< the terminal, kept for resizing
    std::vector<common::UniqueFd> callerFds;  ///< handed over with the start reply
    std::vector<WaitDone> waiters;

    // ExecOnce
    std::optional<OutputCapture> output;
    common::UniqueFd outputFd;
    uint32_t timeoutMs = 0;
    bool timedOut = false;

    /// Without a reply pending: the start failed or was abandoned, the
    /// session only waits for its child to be reaped.
    bool discarded = false;
    bool hungUp = false;

    void watchFd(uint64_t& slot, int fd, std::function<void(short)> handler);
    void unwatch(uint64_t& slot);
    void setTimer(uint64_t& slot, common::EventLoop::Clock::time_point when, std::function<void()> handler);
    void cancelTimer(uint64_t& slot);

    uint64_t childWatch = 0;
    uint64_t reportWatch = 0;
    uint64_t outputWatch = 0;
    uint64_t deadlineTimer = 0;
    uint64_t killTimer = 0;

    /// Sends sig to the command's process group (and SIGKILL to its keeper
    /// or a held child). A signal asked for before the command's pid is
    /// known is sent once it is (applyPendingSignal).
    void signal(int sig);
    void applyPendingSignal();

    /// TIOCSWINSZ on the terminal.
    common::Result<void> resize(uint16_t rows, uint16_t cols);

private:
    common::EventLoop& loop_;
    uint64_t id_;
    std::string allocId_;
    std::string task_;
    std::string owner_;
    bool once_;
    int pendingSignal_ = 0;
};

}  // namespace taskscope::stream::exec
