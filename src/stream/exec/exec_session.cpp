#include "stream/exec/exec_session.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/wait.h>
#include <termios.h>

#include <cerrno>

namespace taskscope::stream::exec {

ExecResult resultFromStatus(int status) {
    if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), WTERMSIG(status)};
    if (WIFEXITED(status)) return {WEXITSTATUS(status), 0};
    return {-1, 0};
}

void ExecResults::add(uint64_t id, ExecResult result, Clock::time_point now) {
    byId_[id] = result;
    order_.emplace_back(now + keep_, id);
    prune(now);
}

std::optional<ExecResult> ExecResults::find(uint64_t id, Clock::time_point now) {
    prune(now);
    const auto it = byId_.find(id);
    if (it == byId_.end()) return std::nullopt;
    return it->second;
}

void ExecResults::prune(Clock::time_point now) {
    while (!order_.empty() && (order_.size() > maxKept_ || order_.front().first <= now)) {
        byId_.erase(order_.front().second);
        order_.pop_front();
    }
}

ExecSession::ExecSession(common::EventLoop& loop, uint64_t id, std::string allocId, std::string task, std::string owner,
                         bool once)
    : loop_(loop),
      id_(id),
      allocId_(std::move(allocId)),
      task_(std::move(task)),
      owner_(std::move(owner)),
      once_(once) {}

ExecSession::~ExecSession() {
    for (auto* slot : {&childWatch, &reportWatch, &outputWatch}) unwatch(*slot);
    for (auto* slot : {&deadlineTimer, &killTimer}) cancelTimer(*slot);
}

void ExecSession::watchFd(uint64_t& slot, int fd, std::function<void(short)> handler) {
    unwatch(slot);
    slot = loop_.addFd(fd, POLLIN, std::move(handler));
}

void ExecSession::unwatch(uint64_t& slot) {
    if (slot) loop_.removeFd(std::exchange(slot, 0));
}

void ExecSession::setTimer(uint64_t& slot, common::EventLoop::Clock::time_point when, std::function<void()> handler) {
    cancelTimer(slot);
    slot = loop_.addTimer(when, std::move(handler));
}

void ExecSession::cancelTimer(uint64_t& slot) {
    if (slot) loop_.cancelTimer(std::exchange(slot, 0));
}

namespace {

// The keeper has ended (its pidfd is readable): its pids, and the
// command's, may already name other processes.
bool keeperDone(int pidfd) {
    pollfd p{pidfd, POLLIN, 0};
    return ::poll(&p, 1, 0) != 0;
}

void killKeeper(const HeldChild& child) {
    if (child.pidfd && ::syscall(SYS_pidfd_send_signal, child.pidfd.get(), SIGKILL, nullptr, 0) == 0) return;
    if (child.pidfd || child.pid <= 0) return;  // gone already
    ::kill(child.pid, SIGKILL);
}

}  // namespace

void ExecSession::signal(int sig) {
    if (child.pid <= 0 || reaped) return;
    // Not our child: its pids stay its own only while the keeper lives.
    if (adopted && (!child.pidfd || keeperDone(child.pidfd.get()))) return;
    if (phase == ExecPhase::Attaching) {
        // Held outside the task: nothing of the command has run.
        ::kill(child.pid, SIGKILL);
        return;
    }
    if (reports.leader == 0) {
        if (child.reports) reports.read(child.reports.get());
        if (reports.leader == 0) {
            if (reports.eof) {
                ::kill(child.pid, SIGKILL);  // the keeper gave up before it forked the command
            } else if (pendingSignal_ != SIGKILL) {
                pendingSignal_ = sig;
            }
            return;
        }
    }
    // The command leads its own process group (it called setsid); the
    // group takes whatever it started in the foreground too.
    const pid_t group = reports.leader;
    if (::kill(-group, sig) < 0 && errno == ESRCH) ::kill(group, sig);
    if (sig == SIGKILL) killKeeper(child);
}

void ExecSession::applyPendingSignal() {
    if (!pendingSignal_) return;
    if (reports.leader == 0 && !reports.eof) return;
    signal(std::exchange(pendingSignal_, 0));
}

common::Result<void> ExecSession::resize(uint16_t rows, uint16_t cols) {
    winsize ws{};
    ws.ws_row = rows;
    ws.ws_col = cols;
    if (::ioctl(master.get(), TIOCSWINSZ, &ws) < 0) return common::errnoError("TIOCSWINSZ", errno);
    return {};
}

}  // namespace taskscope::stream::exec
