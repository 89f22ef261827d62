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

extern "C" {
#include "shim/isolation.h"
}
#include <climits>
#include <cstring>

namespace taskscope::stream::exec {

namespace {

using common::errnoError;
using common::Result;
using common::UniqueFd;

// The child's exit codes before the command runs; nobody waits for a
// session that failed to start, they only tell a debugger what happened.
constexpr int kExitAborted = 125;  // released never: the streamer let go of it
constexpr int kExitSetup = 126;
constexpr int kExitNotFound = 127;

// One report on the pipe: a single write(2) below PIPE_BUF, so atomic.
struct Wire {
    int32_t kind;
    int32_t value;
    char step[24];
};
constexpr int32_t kLeader = 1;
constexpr int32_t kFailed = 2;

// Everything the child uses, computed before fork().
struct ChildPlan {
    std::vector<char*> argv;
    std::vector<char*> envp;
    const char* path = nullptr;
    const char* cwd = nullptr;
    uid_t uid = 0;
    gid_t gid = 0;
    const gid_t* groups = nullptr;
    size_t ngroups = 0;
    std::array<int, 3> stdio{};
    bool tty = false;
    const TaskNamespaces* ns = nullptr;
    iso_opts caps{};  ///< only have_caps/caps: the capability steps of src/shim/caps.c
    int releaseRead = -1;
    int releaseWrite = -1;
    int reportRead = -1;
    int reportWrite = -1;
    int statusRead = -1;
    int statusWrite = -1;
};

// --- in the child: system calls only from here to the end of childMain ---

void report(int fd, int32_t kind, int32_t value, const char* step, const char* detail) {
    Wire w{};
    w.kind = kind;
    w.value = value;
    size_t k = 0;
    for (const char* s : {step, detail})
        for (; s && *s && k + 1 < sizeof w.step; ++s) w.step[k++] = *s;
    ssize_t n;
    do n = ::write(fd, &w, sizeof w);
    while (n < 0 && errno == EINTR);
}

[[noreturn]] void fail(const ChildPlan& p, const char* step, int err, const char* detail = nullptr) {
    report(p.reportWrite, kFailed, err, step, detail);
    _exit(err == ENOENT ? kExitNotFound : kExitSetup);
}

void closeFrom(unsigned first, bool onExec) {
    if (::syscall(SYS_close_range, first, ~0U, onExec ? CLOSE_RANGE_CLOEXEC : 0U) == 0) return;
    for (int fd = static_cast<int>(first); fd < 65536; ++fd) {
        if (onExec)
            (void)::fcntl(fd, F_SETFD, FD_CLOEXEC);
        else
            (void)::close(fd);
    }
}

// Dies the way the command died, so that whoever waits for the relay sees
// the command's own status.
[[noreturn]] void mirror(int status) {
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        // The command may have dumped core; the relay must not dump its own.
        (void)::prctl(PR_SET_DUMPABLE, 0);
        const rlimit none{0, 0};
        (void)::setrlimit(RLIMIT_CORE, &none);
        (void)::signal(sig, SIG_DFL);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, sig);
        (void)::sigprocmask(SIG_UNBLOCK, &s, nullptr);
        (void)::kill(::getpid(), sig);
        _exit(128 + sig);
    }
    _exit(kExitSetup);
}

[[noreturn]] void keep(const ChildPlan& p, pid_t command) {
    report(p.reportWrite, kLeader, command, "", nullptr);
    // Hold nothing of the session but the status pipe: its pipes and
    // terminal end with the command. Not dumpable: no process of the task
    // may reach even that descriptor through /proc.
    (void)::prctl(PR_SET_DUMPABLE, 0);
    if (::dup2(p.statusWrite, 0) < 0) _exit(kExitSetup);
    closeFrom(1, false);
    int status = 0;
    while (::waitpid(command, &status, 0) < 0)
        if (errno != EINTR) _exit(kExitSetup);
    // One write below PIPE_BUF: whoever reads gets all of it or nothing.
    ssize_t n;
    do n = ::write(0, &status, sizeof status);
    while (n < 0 && errno == EINTR);
    mirror(status);
}

[[noreturn]] void execCommand(const ChildPlan& p) {
    const char* file = p.argv[0];
    if (std::strchr(file, '/')) {
        ::execve(file, p.argv.data(), p.envp.data());
        fail(p, "execve ", errno, file);
    }
    // execvpe(3) would search the streamer's PATH, not the command's.
    int err = ENOENT;
    const size_t flen = std::strlen(file);
    char buf[PATH_MAX];
    for (const char* dir = p.path ? p.path : "";;) {
        const char* end = ::strchrnul(dir, ':');
        const size_t dlen = static_cast<size_t>(end - dir);
        if (dlen + flen + 3 <= sizeof buf) {
            size_t k = 0;
            if (dlen == 0)
                buf[k++] = '.';
            else
                std::memcpy(buf, dir, dlen), k = dlen;
            buf[k++] = '/';
            std::memcpy(buf + k, file, flen + 1);
            ::execve(buf, p.argv.data(), p.envp.data());
            switch (errno) {
                case EACCES:
                    err = EACCES;
                    break;
                case ENOENT:
                case ENOTDIR:
                case ESTALE:
                case ELOOP:
                case ENAMETOOLONG:
                case ENODEV:
                    break;
                default:
                    fail(p, "execve ", errno, file);
            }
        }
        if (*end == '\0') break;
        dir = end + 1;
    }
    fail(p, "execve ", err, file);
}

// The process that becomes the command: session, terminal, stdio,
// identity, working directory, a clean signal state, exec.
[[noreturn]] void becomeCommand(const ChildPlan& p) {
    // Above 2 first, so that no dup2 replaces a source still needed.
    int src[3];
    for (int i = 0; i < 3; ++i)
        if ((src[i] = ::fcntl(p.stdio[static_cast<size_t>(i)], F_DUPFD_CLOEXEC, 3)) < 0) fail(p, "dup", errno);
    for (int i = 0; i < 3; ++i)
        if (::dup2(src[i], i) < 0) fail(p, "dup2", errno);
    if (p.tty) {
        if (::ioctl(0, TIOCSCTTY, 0) < 0) fail(p, "TIOCSCTTY", errno);
        // Its user owns its terminal, as after a login.
        (void)::fchown(0, p.uid, static_cast<gid_t>(-1));
    }
    // The task's capability set, by the very steps its shim ran (caps.c).
    const char* step = "";
    if (const int e = caps_before_ids(&p.caps, &step)) fail(p, step, e);
    if (::geteuid() == 0 && ::setgroups(p.ngroups, p.groups) < 0) fail(p, "setgroups", errno);
    if ((::getgid() != p.gid || ::getegid() != p.gid) && ::setgid(p.gid) < 0) fail(p, "setgid", errno);
    if ((::getuid() != p.uid || ::geteuid() != p.uid) && ::setuid(p.uid) < 0) fail(p, "setuid", errno);
    if (const int e = caps_after_ids(&p.caps, p.uid, &step)) fail(p, step, e);
    // Set after the identity change, which clears it: the command dies with
    // its keeper rather than run on unwatched.
    (void)::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::chdir(p.cwd) < 0) fail(p, "chdir ", errno, p.cwd);
    // Only an ignored signal survives exec: the streamer ignores SIGPIPE.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig = 1; sig < NSIG; ++sig)
        if (sig != SIGKILL && sig != SIGSTOP) (void)::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    (void)::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Whatever the streamer holds without O_CLOEXEC stays out of the task.
    closeFrom(3, true);
    execCommand(p);
}

[[noreturn]] void childMain(const ChildPlan& p) {
    // Until exec only SIGKILL ends us, whatever reaches the streamer's group.
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

    // Now in the task's scope.
    for (const auto& j : p.ns->join)
        if (::setns(j.fd.get(), j.nstype) < 0) fail(p, "setns ", errno, j.kind);
    if (p.ns->root) {
        if (::fchdir(p.ns->root.get()) < 0) fail(p, "fchdir root", errno);
        if (::chroot(".") < 0) fail(p, "chroot", errno);
    }
    const pid_t command = ::fork();
    if (command < 0) fail(p, "fork", errno);
    if (command > 0) keep(p, command);
    ::close(p.statusWrite);
    if (::setsid() < 0) fail(p, "setsid", errno);
    becomeCommand(p);
}

// --- back in the streamer ---

// A field of /proc/<pid>/status, as a number in `base`: "CapBnd:\t00000000a80405fb"
// (16), "NoNewPrivs:\t1" (10).
std::optional<uint64_t> statusField(const std::string& statusFile, const std::string& field, int base) {
    std::ifstream in(statusFile);
    std::string line;
    const auto key = field + ":";
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) {
            std::istringstream v(line.substr(key.size()));
            uint64_t n = 0;
            if (v >> std::setbase(base) >> n) return n;
        }
    return std::nullopt;
}

std::optional<uint64_t> boundingSet(const std::string& statusFile) { return statusField(statusFile, "CapBnd", 16); }

bool sameFile(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

Result<UniqueFd> openPidfd(pid_t pid) {
    const long fd = ::syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0) return errnoError("pidfd_open " + std::to_string(pid), errno);
    return UniqueFd(static_cast<int>(fd));
}

Result<TaskNamespaces> openTaskNamespaces(pid_t pid, const std::string& proc) {
    TaskNamespaces ns;
    const auto base = proc + "/" + std::to_string(pid);
    bool mntDiffers = false;
    for (const auto& [kind, type] : kNamespaces) {
        struct stat mine {
        }, theirs{};
        const auto self = proc + "/self/ns/" + kind;
        if (::stat(self.c_str(), &mine) != 0) {
            if (errno == ENOENT) continue;  // a kernel without this kind
            return errnoError("stat " + self, errno);
        }
        const auto path = base + "/ns/" + kind;
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd || ::fstat(fd.get(), &theirs) != 0) return errnoError("open " + path, errno);
        if (sameFile(mine, theirs)) continue;
        if (type == CLONE_NEWNS) mntDiffers = true;
        if (type == CLONE_NEWPID) ns.newPid = true;
        ns.join.push_back({kind, type, std::move(fd)});
    }
    const auto rootPath = base + "/root";
    UniqueFd root(::open(rootPath.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    struct stat theirs {
    }, mine{};
    if (!root || ::fstat(root.get(), &theirs) != 0) return errnoError("open " + rootPath, errno);
    if (::stat((proc + "/self/root").c_str(), &mine) != 0) return errnoError("stat " + proc + "/self/root", errno);
    if (mntDiffers || !sameFile(mine, theirs)) ns.root = std::move(root);
    const auto theirCaps = boundingSet(base + "/status"), myCaps = boundingSet(proc + "/self/status");
    if (theirCaps && myCaps && (*theirCaps & ~*myCaps) == 0 && *theirCaps != *myCaps) ns.caps = *theirCaps;
    ns.noNewPrivs = statusField(base + "/status", "NoNewPrivs", 10).value_or(0) == 1;
    return ns;
}

Result<HeldChild> spawnHeld(const SpawnSpec& spec, const TaskNamespaces& ns) {
    if (spec.argv.empty()) return common::makeError("InvalidArgument", "the command is empty");
    int rel[2], rep[2];
    if (::pipe2(rel, O_CLOEXEC) < 0) return errnoError("pipe", errno);
    UniqueFd releaseRead(rel[0]), releaseWrite(rel[1]);
    if (::pipe2(rep, O_CLOEXEC) < 0) return errnoError("pipe", errno);
    UniqueFd reportRead(rep[0]), reportWrite(rep[1]);
    int st[2];
    if (::pipe2(st, O_CLOEXEC) < 0) return errnoError("pipe", errno);
    UniqueFd statusRead(st[0]), statusWrite(st[1]);

    ChildPlan p;
    for (const auto& a : spec.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
    p.argv.push_back(nullptr);
    for (const auto& e : spec.env) {
        p.envp.push_back(const_cast<char*>(e.c_str()));
        if (e.rfind("PATH=", 0) == 0) p.path = e.c_str() + 5;
    }
    p.envp.push_back(nullptr);
    p.cwd = spec.cwd.c_str();
    p.uid = spec.uid;
    p.gid = spec.gid;
    p.groups = spec.groups.data();
    p.ngroups = spec.groups.size();
    p.stdio = spec.stdio;
    p.tty = spec.tty;
    p.ns = &ns;
    if (ns.caps) {
        p.caps.have_caps = 1;
        p.caps.caps = *ns.caps;
    }
    p.caps.no_new_privs = ns.noNewPrivs ? 1 : 0;
    p.releaseRead = releaseRead.get();
    p.releaseWrite = releaseWrite.get();
    p.reportRead = reportRead.get();
    p.reportWrite = reportWrite.get();
    p.statusRead = statusRead.get();
    p.statusWrite = statusWrite.get();

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
        Wire w{};
        const ssize_t n = ::read(fd, &w, sizeof w);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return;  // EAGAIN: more later
        if (n == 0) {
            eof = true;
            return;
        }
        if (static_cast<size_t>(n) != sizeof w) continue;  // cannot happen: writes are atomic
        w.step[sizeof w.step - 1] = '\0';
        if (w.kind == kLeader) {
            leader = w.value;
        } else if (w.kind == kFailed && !failed) {
            failed = true;
            error = w.value;
            step = w.step;
        }
    }
}

}  // namespace taskscope::stream::exec
