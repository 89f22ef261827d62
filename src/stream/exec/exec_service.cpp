#include "stream/exec/exec_service.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/files.hpp"
#include "stream/exec/exec_request.hpp"
#include "common/error_names.hpp"

namespace taskscope::stream::exec {

namespace {

using common::Error;
using common::makeError;
using common::Result;
using common::UniqueFd;

constexpr size_t kOutputBudget = 1 << 20;  // per wakeup: sessions and log collectors take turns
// Session numbers are noted on disk this many at a time, so that a start
// writes the file once in a while, not each time.
constexpr uint64_t kNumbersPerNote = 1024;

Error notRunning(pid_t pid, const std::string& why) {
    return makeError(common::errors::kNotRunning, "the task's main process " + std::to_string(pid) + " " + why);
}

Result<std::array<UniqueFd, 2>> makePipe() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return common::errnoError("pipe", errno);
    return std::array<UniqueFd, 2>{UniqueFd(p[0]), UniqueFd(p[1])};
}

// A new terminal: the master, and its slave opened without a path lookup
// (the slave's name could be raced in /dev/pts).
Result<std::array<UniqueFd, 2>> makeTerminal(uint16_t rows, uint16_t cols) {
    UniqueFd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!master) return common::errnoError("posix_openpt", errno);
    if (::unlockpt(master.get()) < 0) return common::errnoError("unlockpt", errno);
    UniqueFd slave(::ioctl(master.get(), TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!slave) return common::errnoError("TIOCGPTPEER", errno);
    winsize ws{};
    ws.ws_row = rows;
    ws.ws_col = cols;
    if (::ioctl(master.get(), TIOCSWINSZ, &ws) < 0) return common::errnoError("TIOCSWINSZ", errno);
    return std::array<UniqueFd, 2>{std::move(master), std::move(slave)};
}

bool exited(int pidfd) {
    pollfd p{pidfd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
}

Error spawnError(const ExecSession& s) {
    const auto& r = s.reports;
    if (r.step.rfind("execve", 0) == 0 && r.error == ENOENT)
        return makeError(common::errors::kNoSuchBinary, "'" + s.program + "' is not found in the task");
    return makeError(common::errors::kExecFailed, r.step + ": " + std::strerror(r.error));
}

}  // namespace

struct ExecService::Pending {
    StartDone start;
    OnceDone once;

    void fail(Error error) {
        if (start) start(std::move(error));
        if (once) once(std::move(error));
    }
};

ExecService::ExecService(common::EventLoop& loop, TaskDirectory& tasks, ScopeAttacher& scopes,
                         ExecServiceOptions options)
    : loop_(loop),
      tasks_(tasks),
      scopes_(scopes),
      options_(std::move(options)),
      results_(options_.maxKeptResults, options_.keepResults),
      records_(options_.recordDir),
      descriptors_(options_.descriptors ? *options_.descriptors : systemdDescriptorStore()) {}

// Commands that run keep running: they live in their tasks' scopes and
// their callers hold their descriptors; only their exit goes unreported.
ExecService::~ExecService() = default;

ExecSession* ExecService::find(uint64_t id) {
    const auto it = sessions_.find(id);
    return it == sessions_.end() ? nullptr : it->second.get();
}

Result<uint64_t> ExecService::admit(const ExecRequest& request, bool once) {
    if (auto r = validateCommand(request.command); !r) return r.error();
    if (auto r = validateEnv(request.env); !r) return r.error();
    if (request.tty && !once)
        if (auto r = validateWindow(request.rows, request.cols); !r) return r.error();
    if (sessions_.size() >= options_.maxSessions)
        return makeError(common::errors::kBusy, "too many exec sessions (" + std::to_string(sessions_.size()) + ", at most " +
                                     std::to_string(options_.maxSessions) + ")");
    const uint64_t id = nextId_++;
    if (id >= reservedBelow_) {
        reservedBelow_ = id + kNumbersPerNote;
        if (auto r = records_.reserveBelow(reservedBelow_); !r)
            spdlog::warn("Exec session numbers may repeat after a restart: {}", r.error().message);
    }
    auto s = std::make_unique<ExecSession>(loop_, id, request.allocId, request.task, request.owner, once);
    s->program = request.command[0];
    s->tty = request.tty && !once;
    sessions_[id] = std::move(s);
    return id;
}

void ExecService::start(ExecRequest request, StartDone done) {
    auto id = admit(request, false);
    if (!id) return done(id.error());
    pending_[*id] = std::make_unique<Pending>(Pending{std::move(done), {}});
    resolve(*id, std::move(request));
}

void ExecService::once(ExecRequest request, uint32_t timeoutMs, uint32_t maxOutput, OnceDone done) {
    if (auto r = validateOnce(timeoutMs, maxOutput); !r) return done(r.error());
    auto id = admit(request, true);
    if (!id) return done(id.error());
    auto& s = *sessions_[*id];
    s.output.emplace(maxOutput);
    s.timeoutMs = timeoutMs;
    pending_[*id] = std::make_unique<Pending>(Pending{{}, std::move(done)});
    const auto when = common::EventLoop::Clock::now() + std::chrono::milliseconds(timeoutMs);
    s.setTimer(s.deadlineTimer, when, [this, id = *id] { onDeadline(id); });
    resolve(*id, std::move(request));
}

void ExecService::resolve(uint64_t id, ExecRequest request) {
    auto req = std::make_shared<ExecRequest>(std::move(request));
    std::weak_ptr<bool> alive = alive_;
    tasks_.getTask(req->allocId, req->task, [this, alive, id, req](Result<wire::TaskInfo> task) {
        if (!alive.expired()) onTask(id, *req, std::move(task));
    });
}

void ExecService::onTask(uint64_t id, const ExecRequest& request, Result<wire::TaskInfo> task) {
    auto* s = find(id);
    if (!s || s->phase != ExecPhase::Resolving || s->discarded) return;  // timed out or abandoned meanwhile
    if (!task) return failStart(*s, task.error());
    std::string unit;
    if (auto r = spawn(*s, request, *task, unit); !r) return failStart(*s, r.error());
    s->phase = ExecPhase::Attaching;
    s->watchFd(s->childWatch, s->child.pidfd.get(), [this, id](short) { onChildExit(id); });
    std::weak_ptr<bool> alive = alive_;
    scopes_.attach(unit, s->child.pid, [this, alive, id](Result<void> r) {
        if (!alive.expired()) onAttached(id, std::move(r));
    });
}

Result<void> ExecService::spawn(ExecSession& s, const ExecRequest& request, const wire::TaskInfo& task,
                                std::string& unit) {
    auto target = execTarget(task);
    if (!target) return target.error();

    // Held open, the pidfd keeps the pid from being reused: once the
    // process is seen in the task's scope, the namespaces opened through
    // its pid are the task's, if it is still alive after.
    const pid_t pid = target->pid;
    auto pidfd = openPidfd(pid);
    if (!pidfd) return notRunning(pid, "has exited");
    auto cgroups = common::readFile(options_.proc + "/" + std::to_string(pid) + "/cgroup");
    if (!cgroups || !inCgroup(*cgroups, target->cgroup)) return notRunning(pid, "is not in " + target->cgroup);
    // The task's process spec and the shim that applies it, opened here:
    // the child only makes system calls.
    UniqueFd processSpec(::open(target->processSpec.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!processSpec) {
        if (exited(pidfd->get())) return notRunning(pid, "has exited");
        return common::errnoError("open the task's process spec " + target->processSpec, errno);
    }
    UniqueFd shim(::open(options_.shimPath.c_str(), O_PATH | O_CLOEXEC));
    if (!shim) return common::errnoError("open " + options_.shimPath, errno);

    SpawnSpec spec;
    spec.argv = request.command;
    spec.env = execEnvironment(target->env, request.env);
    spec.taskPid = pid;
    spec.taskPidfd = pidfd->get();
    spec.shim = shim.get();
    spec.processSpec = processSpec.get();
    std::vector<UniqueFd> childSide;  // closed here once the child has its copies
    if (s.once()) {
        UniqueFd devNull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (!devNull) return common::errnoError("open /dev/null", errno);
        auto out = makePipe();
        if (!out) return out.error();
        spec.stdio = {devNull.get(), (*out)[1].get(), (*out)[1].get()};
        (void)::fcntl((*out)[0].get(), F_SETFL, O_NONBLOCK);
        s.outputFd = std::move((*out)[0]);
        childSide.push_back(std::move(devNull));
        childSide.push_back(std::move((*out)[1]));
    } else if (request.tty) {
        auto term = makeTerminal(static_cast<uint16_t>(request.rows), static_cast<uint16_t>(request.cols));
        if (!term) return term.error();
        spec.tty = true;
        spec.stdio = {(*term)[1].get(), (*term)[1].get(), (*term)[1].get()};
        UniqueFd forCaller(::fcntl((*term)[0].get(), F_DUPFD_CLOEXEC, 3));
        if (!forCaller) return common::errnoError("dup", errno);
        s.callerFds.push_back(std::move(forCaller));
        s.master = std::move((*term)[0]);
        childSide.push_back(std::move((*term)[1]));
    } else {
        std::array<std::array<UniqueFd, 2>, 3> pipes;
        for (auto& p : pipes) {
            auto made = makePipe();
            if (!made) return made.error();
            p = std::move(*made);
        }
        spec.stdio = {pipes[0][0].get(), pipes[1][1].get(), pipes[2][1].get()};
        s.callerFds.push_back(std::move(pipes[0][1]));
        s.callerFds.push_back(std::move(pipes[1][0]));
        s.callerFds.push_back(std::move(pipes[2][0]));
        childSide.push_back(std::move(pipes[0][0]));
        childSide.push_back(std::move(pipes[1][1]));
        childSide.push_back(std::move(pipes[2][1]));
    }
    auto child = spawnHeld(spec);
    if (!child) return child.error().context("start the child");
    s.child = std::move(*child);
    unit = target->unit;
    return {};
}

void ExecService::onAttached(uint64_t id, Result<void> result) {
    auto* s = find(id);
    if (!s || s->phase != ExecPhase::Attaching || s->discarded) return;
    if (!result) return failStart(*s, result.error());
    if (auto r = releaseChild(s->child); !r) return failStart(*s, r.error());
    s->phase = ExecPhase::Starting;
    s->watchFd(s->reportWatch, s->child.reports.get(), [this, id](short) { onReports(id); });
}

void ExecService::onReports(uint64_t id) {
    auto* s = find(id);
    if (!s) return;
    s->reports.read(s->child.reports.get());
    s->applyPendingSignal();
    if (s->reports.failed && !s->discarded && s->phase == ExecPhase::Starting) return failStart(*s, spawnError(*s));
    if (!s->reports.eof) return;
    s->unwatch(s->reportWatch);
    if (s->phase == ExecPhase::Starting && !s->discarded) running(*s);
}

void ExecService::running(ExecSession& s) {
    s.phase = ExecPhase::Running;
    const uint64_t id = s.id();
    if (s.once()) {
        s.watchFd(s.outputWatch, s.outputFd.get(), [this, id](short) { onOutput(id); });
        return;
    }
    spdlog::info("Exec session {} in {}/{} started: {}{} for {}", id, s.allocId(), s.task(), s.program,
                 s.tty ? " (tty)" : "", s.owner());
    auto p = pending_.extract(id);
    if (p.empty()) return;
    record(s);
    ExecStarted started;
    started.session = id;
    started.fds = std::move(s.callerFds);
    p.mapped()->start(std::move(started));
    if (events_) events_->sessionsChanged();
}

void ExecService::failStart(ExecSession& s, Error error) {
    const uint64_t id = s.id();
    // The caller's error, not the daemon's: worth a line, not a warning.
    spdlog::log(s.once() ? spdlog::level::debug : spdlog::level::info, "Exec of {} in {}/{} for {} failed: {}: {}",
                s.program, s.allocId(), s.task(), s.owner(), error.name, error.message);
    s.discarded = true;
    s.cancelTimer(s.deadlineTimer);
    auto p = pending_.extract(id);
    if (s.child.pid > 0 && !s.reaped) {
        // Taken back; forgotten once reaped (onChildExit).
        s.signal(SIGKILL);
    } else {
        sessions_.erase(id);
    }
    if (!p.empty()) p.mapped()->fail(std::move(error));
}

void ExecService::onChildExit(uint64_t id) {
    auto* s = find(id);
    if (!s) return;
    int status = 0;
    pid_t r;
    do r = ::waitpid(s->child.pid, &status, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == 0) return;
    if (r < 0) status = W_EXITCODE(255, 0);  // not ours to reap (cannot happen): report it as lost
    s->reaped = true;
    s->unwatch(s->childWatch);
    finish(id, status);
}

void ExecService::finish(uint64_t id, int status) {
    auto* s = find(id);
    if (s->discarded) {
        sessions_.erase(id);
        return;
    }
    if (s->child.reports) s->reports.read(s->child.reports.get());  // its last words
    if (s->once() && s->timedOut) {
        auto p = pending_.extract(id);
        const auto ms = s->timeoutMs;
        spdlog::debug("One-shot exec of {} in {}/{} killed at its deadline ({} ms)", s->program, s->allocId(),
                      s->task(), ms);
        sessions_.erase(id);
        if (!p.empty())
            p.mapped()->fail(makeError(common::errors::kTimeout, "the command did not end within " + std::to_string(ms) +
                                                      " ms; its process group was killed"));
        return;
    }
    if (s->phase == ExecPhase::Attaching) {
        return failStart(*s, makeError(common::errors::kExecFailed, "the child died before it was released into the task's scope"));
    }
    if (s->phase == ExecPhase::Starting) {
        if (s->reports.failed) return failStart(*s, spawnError(*s));
        running(*s);  // it ran, and has already ended
    }
    const auto result = resultFromStatus(status);
    forgetRecord(*s);
    s->master.reset();
    s->callerFds.clear();
    if (s->once()) {
        drainOutput(*s);
        spdlog::debug("One-shot exec of {} in {}/{}: exit code {}, {} bytes of output", s->program, s->allocId(),
                      s->task(), result.exitCode, s->output->total());
        OnceResult out;
        out.result = result;
        out.truncated = s->output->truncated();
        out.output = s->output->take();
        auto p = pending_.extract(id);
        sessions_.erase(id);
        if (!p.empty()) p.mapped()->once(std::move(out));
        return;
    }
    spdlog::info("Exec session {} in {}/{} ended: exit code {}{}", id, s->allocId(), s->task(), result.exitCode,
                 result.signal ? " (signal " + std::to_string(result.signal) + ")" : "");
    results_.add(id, result, ExecResults::Clock::now());
    auto waiters = std::move(s->waiters);
    const auto allocId = s->allocId();
    const auto task = s->task();
    sessions_.erase(id);
    for (auto& w : waiters) w(result);
    if (events_) {
        events_->execExited(id, allocId, task, result);
        events_->sessionsChanged();
    }
}

void ExecService::record(ExecSession& s) {
    // Before the caller hears of the session: a restart from then on must
    // find it. Without its record a session still works, only not across
    // a restart of the streamer.
    SessionRecord r{s.id(),           s.allocId(),           s.task(), s.owner(), s.tty, s.child.pid,
                    s.reports.leader, processStartTime(s.child.pid, options_.proc).value_or(0)};
    if (auto saved = records_.save(r); !saved) {
        spdlog::warn("Exec session {} will not survive a restart of the streamer: {}", s.id(), saved.error().message);
        return;
    }
    s.recorded = true;
    for (const auto& [fd, name] : {std::pair{s.child.status.get(), statusFdName(s.id())},
                                   std::pair{s.child.statusHold.get(), statusHoldFdName(s.id())}})
        if (auto stored = descriptors_.store(fd, name); !stored)
            spdlog::warn("Exec session {}: {}", s.id(), stored.error().message);
    if (s.master)
        if (auto stored = descriptors_.store(s.master.get(), terminalFdName(s.id())); !stored)
            spdlog::warn("Exec session {}: {}", s.id(), stored.error().message);
}

void ExecService::forgetRecord(ExecSession& s) {
    if (std::exchange(s.recorded, false)) dropRecord(s.id(), static_cast<bool>(s.master));
}

void ExecService::dropRecord(uint64_t id, bool terminal) {
    descriptors_.drop(statusFdName(id));
    descriptors_.drop(statusHoldFdName(id));
    if (terminal) descriptors_.drop(terminalFdName(id));
    records_.remove(id);
}

std::vector<std::string> ExecService::restore(std::map<std::string, UniqueFd> stored) {
    if (auto r = records_.open(); !r) spdlog::warn("Exec sessions will not survive a restart: {}", r.error().message);
    nextId_ = std::max(nextId_, records_.firstUnused());
    std::vector<std::string> owners;
    auto take = [&stored](const std::string& name) {
        UniqueFd fd;
        if (auto it = stored.find(name); it != stored.end()) {
            fd = std::move(it->second);
            stored.erase(it);
        }
        return fd;
    };
    bool adopted = false;
    auto forget = [this](const SessionRecord& r) { dropRecord(r.session, true); };
    auto ended = [&](const SessionRecord& r, int status, const char* how) {
        const auto result = resultFromStatus(status);
        spdlog::info("Exec session {} in {}/{} {}: exit code {}", r.session, r.allocId, r.task, how, result.exitCode);
        results_.add(r.session, result, ExecResults::Clock::now());
        forget(r);
        if (events_) events_->execExited(r.session, r.allocId, r.task, result);
    };
    for (auto& r : records_.load()) {
        nextId_ = std::max(nextId_, r.session + 1);
        auto status = take(statusFdName(r.session));
        auto hold = take(statusHoldFdName(r.session));  // the store keeps its own
        auto terminal = take(terminalFdName(r.session));
        if (!status) {
            // systemd keeps the store across a crash or restart, not a stop.
            spdlog::warn("Exec session {} in {}/{}: its exit status is lost (the streamer was stopped, not restarted)",
                         r.session, r.allocId, r.task);
            forget(r);
            continue;
        }
        (void)::fcntl(status.get(), F_SETFL, O_NONBLOCK);
        // The pidfd first, then the checks: if the keeper still runs as the
        // process the record names, the pidfd is its for good.
        auto pidfd = openPidfd(r.keeper);
        const auto word = readKeeperStatus(status.get());
        if (word.ended) {
            ended(r, word.status, "ended while the streamer was away");
            continue;
        }
        const bool keeperLives =
            pidfd && r.keeperStart != 0 && processStartTime(r.keeper, options_.proc) == r.keeperStart;
        if (!keeperLives) {
            // Gone without writing: killed (the task's scope was stopped).
            const auto late = readKeeperStatus(status.get());
            ended(r, late.ended ? late.status : SIGKILL, "ended while the streamer was away");
            continue;
        }
        auto s = std::make_unique<ExecSession>(loop_, r.session, r.allocId, r.task, r.owner, false);
        s->adopted = true;
        s->recorded = true;
        s->phase = ExecPhase::Running;
        s->program = "(taken over)";
        s->tty = r.tty;
        s->child.pid = r.keeper;
        s->child.pidfd = std::move(*pidfd);
        s->child.status = std::move(status);
        s->child.statusHold = std::move(hold);
        s->reports.leader = r.leader;
        s->reports.eof = true;
        s->master = std::move(terminal);
        const uint64_t id = r.session;
        s->watchFd(s->childWatch, s->child.pidfd.get(), [this, id](short) { onKeeperExit(id); });
        spdlog::info("Exec session {} in {}/{} for {} taken over{}", id, r.allocId, r.task, r.owner,
                     r.tty ? (s->master ? " with its terminal" : ", its terminal lost") : "");
        if (std::find(owners.begin(), owners.end(), r.owner) == owners.end()) owners.push_back(r.owner);
        sessions_[id] = std::move(s);
        adopted = true;
    }
    for (auto& [name, fd] : stored) {
        spdlog::info("Dropping stored fd '{}': no exec session records it", name);
        descriptors_.drop(name);
    }
    reservedBelow_ = nextId_;  // the next admit notes a fresh block
    if (adopted && events_) events_->sessionsChanged();
    return owners;
}

void ExecService::onKeeperExit(uint64_t id) {
    auto* s = find(id);
    if (!s) return;
    // The keeper writes the status before it exits: none now means it was killed.
    const auto word = readKeeperStatus(s->child.status.get());
    s->unwatch(s->childWatch);
    s->reaped = true;  // nothing to reap: its parent was the streamer before us
    finish(id, word.ended ? word.status : SIGKILL);
}

std::vector<SessionInfo> ExecService::runningSessions() const {
    std::vector<SessionInfo> out;
    for (const auto& [id, s] : sessions_)
        if (!s->once() && !s->discarded && s->phase == ExecPhase::Running)
            out.push_back({id, s->allocId(), s->task(), s->tty});
    return out;
}

void ExecService::drainOutput(ExecSession& s) {
    char buf[65536];
    size_t budget = kOutputBudget;
    while (s.outputFd && budget > 0) {
        const ssize_t n = ::read(s.outputFd.get(), buf, sizeof buf);
        if (n > 0) {
            s.output->append(buf, static_cast<size_t>(n));
            budget -= std::min(budget, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        // End of file (every writer is gone), or a read error: done reading.
        s.unwatch(s.outputWatch);
        s.outputFd.reset();
    }
}

void ExecService::onOutput(uint64_t id) {
    if (auto* s = find(id)) drainOutput(*s);
}

void ExecService::onDeadline(uint64_t id) {
    auto* s = find(id);
    if (!s) return;
    s->deadlineTimer = 0;  // fired: the loop has forgotten it
    s->timedOut = true;
    if (s->discarded) return;
    if (s->child.pid > 0 && !s->reaped) {
        s->signal(SIGKILL);  // finish() replies once it is reaped
        return;
    }
    // Nothing started yet (the manager has not answered).
    auto p = pending_.extract(id);
    const auto ms = s->timeoutMs;
    sessions_.erase(id);
    if (!p.empty())
        p.mapped()->fail(makeError(common::errors::kTimeout, "the command did not start within " + std::to_string(ms) + " ms"));
}

Result<void> ExecService::resize(uint64_t id, uint32_t rows, uint32_t cols) {
    if (auto r = validateWindow(rows, cols); !r) return r;
    auto* s = find(id);
    if (!s || s->discarded || s->once() || s->phase != ExecPhase::Running)
        return makeError(common::errors::kNoSuchSession, "no exec session " + std::to_string(id) + " runs");
    if (!s->tty) return makeError(common::errors::kInvalidArgument, "exec session " + std::to_string(id) + " has no terminal");
    if (!s->master) return makeError(common::errors::kNoSuchSession, "exec session " + std::to_string(id) + " was hung up");
    return s->resize(static_cast<uint16_t>(rows), static_cast<uint16_t>(cols));
}

void ExecService::wait(uint64_t id, WaitDone done) {
    if (auto* s = find(id); s && !s->discarded && !s->once() && s->phase == ExecPhase::Running) {
        if (s->waiters.size() >= options_.maxWaiters)
            return done(makeError(common::errors::kBusy, "too many waiters on exec session " + std::to_string(id)));
        s->waiters.push_back(std::move(done));
        return;
    }
    if (auto r = results_.find(id, ExecResults::Clock::now())) return done(*r);
    done(makeError(common::errors::kNoSuchSession, "no exec session " + std::to_string(id) + " runs or ended lately"));
}

void ExecService::clientGone(const std::string& owner) {
    std::vector<uint64_t> ids;
    for (const auto& [id, s] : sessions_)
        if (s->owner() == owner && !s->hungUp && !s->discarded) ids.push_back(id);
    for (const auto id : ids) {
        auto* s = find(id);
        if (!s) continue;
        s->hungUp = true;
        if (!s->once())
            spdlog::info("Exec session {} in {}/{}: its caller {} left, hanging up", id, s->allocId(), s->task(),
                         owner);
        if (s->phase != ExecPhase::Running) {
            failStart(*s, makeError(common::errors::kInternal, "the caller left the bus"));
        } else if (s->once()) {
            s->signal(SIGKILL);  // nobody wants its result
        } else {
            // As when a terminal goes away: SIGHUP, then SIGKILL for what ignores it.
            if (s->recorded && s->master) descriptors_.drop(terminalFdName(id));
            s->master.reset();
            s->signal(SIGHUP);
            s->setTimer(s->killTimer, common::EventLoop::Clock::now() + options_.hangupGrace, [this, id] {
                if (auto* t = find(id)) {
                    t->killTimer = 0;
                    t->signal(SIGKILL);
                }
            });
        }
    }
}

}  // namespace taskscope::stream::exec
