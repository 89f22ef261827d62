#include "stream/exec/exec_spawn.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <sstream>

#include "shim/shim_protocol.h"
#include "common/error_names.hpp"
#include <climits>
#include <cstring>

namespace taskscope::stream::exec {

namespace {

using common::errnoError;
using common::Result;
using common::UniqueFd;

// The child's exit codes when it never ran the shim; nobody waits for a
// session that failed to start, they only tell a debugger what happened.
constexpr int kExitAborted = 125;  // released never: the streamer let go of it
constexpr int kExitSetup = 126;

// Everything the child uses, computed before fork().
struct ChildPlan {
    std::vector<char*> argv;  ///< the shim's
    std::vector<char*> envp;  ///< the command's
    int shim = -1;
    /// Sources of the shim's fds 0.. (shim_protocol.h): stdio, report,
    /// status, process spec, the task's pidfd.
    std::array<int, 7> fds{};
    int releaseRead = -1;
    int releaseWrite = -1;
    int reportRead = -1;
    int statusRead = -1;
};

// --- in the child: system calls only from here to the end of childMain ---

[[noreturn]] void fail(const ChildPlan& p, const char* step, int err) {
    shim_exec_report r{};
    r.kind = SHIM_REPORT_FAILED;
    r.value = err;
    for (size_t k = 0; step[k] && k + 1 < sizeof r.step; ++k) r.step[k] = step[k];
    ssize_t n;
    do n = ::write(p.fds[SHIM_EXEC_REPORT_FD], &r, sizeof r);
    while (n < 0 && errno == EINTR);
    _exit(kExitSetup);
}

[[noreturn]] void childMain(const ChildPlan& p) {
    // Until exec only SIGKILL ends us, whatever reaches the streamer's
    // group; the shim resets the mask for the command.
    sigset_t all;
    sigfillset(&all);
    (void)::sigprocmask(SIG_SETMASK, &all, nullptr);
    ::close(p.releaseWrite);
    ::close(p.reportRead);
    ::close(p.statusRead);
    (void)::setsid();
    char c = 0;
    ssize_t n;
    do n = ::read(p.releaseRead, &c, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) _exit(kExitAborted);
    ::close(p.releaseRead);

    // Now in the task's scope. Every source above the targets first, so
    // that no dup2 replaces a source still needed.
    constexpr int kAbove = 16;
    std::array<int, 7> src{};
    for (size_t i = 0; i < src.size(); ++i)
        if ((src[i] = ::fcntl(p.fds[i], F_DUPFD_CLOEXEC, kAbove)) < 0) fail(p, "dup", errno);
    const int shim = ::fcntl(p.shim, F_DUPFD_CLOEXEC, kAbove);
    if (shim < 0) fail(p, "dup", errno);
    for (size_t i = 0; i < src.size(); ++i)
        if (::dup2(src[i], static_cast<int>(i)) < 0) fail(p, "dup2", errno);
    // Whatever else the streamer holds stays out of the task.
    if (::syscall(SYS_close_range, static_cast<unsigned>(src.size()), ~0U, CLOSE_RANGE_CLOEXEC) < 0)
        fail(p, "close_range", errno);
    // From the fd: the shim's file need not exist in the task's root.
    ::syscall(SYS_execveat, shim, "", p.argv.data(), p.envp.data(), AT_EMPTY_PATH);
    fail(p, "execve taskscope-shim", errno);
}

}  // namespace

Result<UniqueFd> openPidfd(pid_t pid) {
    const long fd = ::syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0) return errnoError("pidfd_open " + std::to_string(pid), errno);
    return UniqueFd(static_cast<int>(fd));
}

Result<HeldChild> spawnHeld(const SpawnSpec& spec) {
    if (spec.argv.empty()) return common::makeError(common::errors::kInvalidArgument, "the command is empty");
    int rel[2], rep[2];
    if (::pipe2(rel, O_CLOEXEC) < 0) return errnoError("pipe", errno);
    UniqueFd releaseRead(rel[0]), releaseWrite(rel[1]);
    if (::pipe2(rep, O_CLOEXEC) < 0) return errnoError("pipe", errno);
    UniqueFd reportRead(rep[0]), reportWrite(rep[1]);
    int st[2];
    if (::pipe2(st, O_CLOEXEC) < 0) return errnoError("pipe", errno);
    UniqueFd statusRead(st[0]), statusWrite(st[1]);

    std::vector<std::string> shimArgs = {"taskscope-shim", SHIM_OPT_EXEC, std::to_string(spec.taskPid)};
    if (spec.tty) shimArgs.emplace_back(SHIM_OPT_TTY);
    shimArgs.emplace_back("--");
    ChildPlan p;
    for (auto& a : shimArgs) p.argv.push_back(a.data());
    for (const auto& a : spec.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
    p.argv.push_back(nullptr);
    for (const auto& e : spec.env) p.envp.push_back(const_cast<char*>(e.c_str()));
    p.envp.push_back(nullptr);
    p.shim = spec.shim;
    p.fds = {spec.stdio[0],     spec.stdio[1],    spec.stdio[2],  reportWrite.get(),
             statusWrite.get(), spec.processSpec, spec.taskPidfd};
    p.releaseRead = releaseRead.get();
    p.releaseWrite = releaseWrite.get();
    p.reportRead = reportRead.get();
    p.statusRead = statusRead.get();

    const pid_t pid = ::fork();
    if (pid < 0) return errnoError("fork", errno);
    if (pid == 0) childMain(p);

    releaseRead.reset();
    reportWrite.reset();
    auto pidfd = openPidfd(pid);
    if (!pidfd) {
        // Held, it has run nothing: take it back.
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        return pidfd.error();
    }
    (void)::fcntl(reportRead.get(), F_SETFL, O_NONBLOCK);
    (void)::fcntl(statusRead.get(), F_SETFL, O_NONBLOCK);
    HeldChild child;
    child.pid = pid;
    child.pidfd = std::move(*pidfd);
    child.release = std::move(releaseWrite);
    child.reports = std::move(reportRead);
    child.status = std::move(statusRead);
    child.statusHold = std::move(statusWrite);
    return child;
}

Result<void> releaseChild(HeldChild& child) {
    const char go = 'g';
    ssize_t n;
    do n = ::write(child.release.get(), &go, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) return errnoError("release the child", errno);
    child.release.reset();
    return {};
}

KeeperStatus readKeeperStatus(int fd) {
    int status = 0;
    ssize_t n;
    do n = ::read(fd, &status, sizeof status);
    while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof status)) return {true, status};
    if (n < 0 && errno == EAGAIN) return {};
    // End of file (no write end is held any more), or a torn word (cannot
    // happen: the write is atomic): nothing will come.
    return {true, SIGKILL};
}

std::optional<uint64_t> processStartTime(pid_t pid, const std::string& proc) {
    std::ifstream in(proc + "/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    // The command name may hold anything, spaces and ')' included: count
    // from its last ')'. Field 3 (state) follows it; start time is field 22.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream rest(stat.substr(close + 1));
    std::string field;
    for (int k = 3; k <= 22; ++k)
        if (!(rest >> field)) return std::nullopt;
    try {
        return std::stoull(field);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

void SpawnReports::read(int fd) {
    for (;;) {
        shim_exec_report w{};
        const ssize_t n = ::read(fd, &w, sizeof w);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return;  // EAGAIN: more later
        if (n == 0) {
            eof = true;
            return;
        }
        if (static_cast<size_t>(n) != sizeof w) continue;  // cannot happen: writes are atomic
        take(w);
    }
}

void SpawnReports::take(const shim_exec_report& w) {
    // The command's pid, once: signal() sends to -leader, so 1 (every
    // process: kill(-1, ...)), 0 or a negative number (a group, or the
    // whole system again) would never be the command; such a frame, or a
    // second leader, is ignored.
    if (w.kind == SHIM_REPORT_LEADER) {
        if (leader == 0 && w.value >= 2) leader = w.value;
        return;
    }
    if (w.kind != SHIM_REPORT_FAILED || failed) return;
    failed = true;
    error = w.value;
    // The step goes into the start's error (the journal, the bus): text
    // only, up to its first NUL or 23 bytes (the shim's cut, which can
    // split a program name's character), any other byte as '?'.
    step.clear();
    for (size_t i = 0; i + 1 < sizeof w.step && w.step[i] != '\0'; ++i) {
        const auto c = static_cast<unsigned char>(w.step[i]);
        step += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
    }
}

}  // namespace taskscope::stream::exec
