#include "stream/logs/streamer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "common/files.hpp"
#include "common/fd_store.hpp"
#include "stream/logs/log_dir.hpp"
#include "common/error_names.hpp"
#include "stream/logs/log_reader.hpp"
#include "wire/log_files.hpp"

namespace taskscope::stream::logs {

namespace {

constexpr uint64_t kDrainBudget = 4 << 20;  // per wakeup and stream, so tasks take turns
constexpr int kPipeSize = 1 << 20;          // fewer wakeups, and room while we restart
constexpr int kCompleteRounds = 64;

std::string fdName(const std::string& unit, size_t stream) {
    return wire::spoolName(unit, kStreams[stream]);
}

}  // namespace

Streamer::Streamer(common::EventLoop& loop, StreamerOptions options)
    : loop_(loop), options_(std::move(options)), spool_(options_.spoolDir) {}

Streamer::~Streamer() {
    sessions_.clear();
    for (auto& [unit, t] : tasks_)
        for (auto& s : t->streams) {
            if (s.watch) loop_.removeFd(s.watch);
            if (s.outWatch) loop_.removeFd(s.outWatch);
            if (s.journalWatch) loop_.removeFd(s.journalWatch);
        }
    if (watcherHandle_) loop_.removeFd(watcherHandle_);
}

std::string Streamer::doneRecord(const std::string& unit) const {
    return options_.stateDir + "/done/" + unit + ".json";
}

common::Result<void> Streamer::start(std::map<std::string, common::UniqueFd> stored) {
    if (auto r = common::makeDirs(options_.spoolDir, common::kPrivateDirMode); !r)
        return r.error().context("create spool directory");
    if (auto r = common::makeDirs(options_.stateDir + "/done", common::kPrivateDirMode); !r)
        return r.error().context("create state directory");
    loadDoneRecords();
    // Watch before scanning: a task added in between is seen twice, never missed.
    if (auto r = watcher_.start(options_.spoolDir); !r) return r;
    watcherHandle_ = loop_.addFd(watcher_.fd(), POLLIN, [this](short) { onSpoolEvents(); });
    for (const auto& unit : spool_.units()) addTask(unit, stored);
    for (auto& [name, fd] : stored) {
        spdlog::info("Dropping stored fd '{}': its task is gone from the spool", name);
        common::unstoreFd(name);
    }
    if (!stored.empty() && events_) events_->tasksChanged();
    return {};
}

void Streamer::loadDoneRecords() {
    const auto dir = options_.stateDir + "/done";
    Spool records(dir);
    for (const auto& unit : records.units()) {
        auto t = records.load(unit);
        if (t) done_[unit] = *t;
    }
}

void Streamer::onSpoolEvents() {
    auto batch = watcher_.read();
    if (batch.overflowed) {
        // Some exits or removals were dropped by the kernel: without the
        // scan those tasks would never complete and their shims would wait
        // for a release forever. The batch is older than the scan.
        spdlog::warn("The spool's change events overflowed (fs.inotify.max_queued_events); reading the whole spool "
                     "again");
        rescanSpool();
        return;
    }
    for (const auto& ev : batch.events) {
        if (ev.removed)
            onSpoolEntryRemoved(ev.unit);
        else
            onSpoolEntry(ev.unit);
    }
}

void Streamer::onSpoolEntryRemoved(const std::string& unit) {
    // Ours are removed only after the task left tasks_; this is the
    // manager taking back a start that failed.
    if (tasks_.count(unit)) dropTask(unit);
    forgotten_.erase(unit);
}

void Streamer::onSpoolEntry(const std::string& unit) {
    auto it = tasks_.find(unit);
    if (it == tasks_.end()) {
        std::map<std::string, common::UniqueFd> none;
        addTask(unit, none);
        return;
    }
    auto info = spool_.load(unit);
    if (!info) {
        spdlog::warn("Failed to read {}: {}, ignoring", spool_.description(unit), info.error().message);
        return;
    }
    updateTask(*it->second, std::move(*info));
}

void Streamer::rescanSpool() {
    const auto units = spool_.units();
    const std::set<std::string> present(units.begin(), units.end());
    std::vector<std::string> gone;
    for (const auto& [unit, t] : tasks_)
        if (!present.contains(unit)) gone.push_back(unit);
    for (const auto& unit : gone) onSpoolEntryRemoved(unit);
    for (const auto& unit : units) {
        // An entry made again for a new run of the task (the manager
        // removes the old one first) has new fifos: the events would have
        // said "removed" then "added", and so does the scan.
        if (auto it = tasks_.find(unit); it != tasks_.end() && !readsFifosOf(*it->second, unit))
            onSpoolEntryRemoved(unit);
        onSpoolEntry(unit);
    }
}

bool Streamer::readsFifosOf(const Task& t, const std::string& unit) const {
    for (size_t i = 0; i < 2; ++i) {
        const auto& c = t.streams[i].collector;
        struct stat held {}, named {};
        if (!c || ::fstat(c->fifoFd(), &held) < 0 || ::stat(spool_.fifo(unit, kStreams[i]).c_str(), &named) < 0)
            continue;  // nothing to compare: left as it is
        if (held.st_ino != named.st_ino || held.st_dev != named.st_dev) return false;
    }
    return true;
}

void Streamer::addTask(const std::string& unit, std::map<std::string, common::UniqueFd>& stored) {
    if (tasks_.count(unit)) return;
    auto info = spool_.load(unit);
    if (!info) {
        // Half-written by a manager that died, or gone already.
        spdlog::warn("Failed to read the spool entry of {}: {}, ignoring", unit, info.error().message);
        return;
    }
    auto task = std::make_unique<Task>();
    task->info = *info;
    // Output forwarded to the task's own paths has no files of ours.
    if (!info->forward)
        if (auto r = common::makeDirs(info->logDir, common::kPrivateDirMode); !r)
            spdlog::error("Failed to create the log directory of {}: {}", unit, r.error().message);
    for (size_t i = 0; i < 2; ++i) {
        const auto name = fdName(unit, i);
        common::UniqueFd fd;
        bool wasStored = false;
        if (auto s = stored.find(name); s != stored.end()) {
            fd = std::move(s->second);
            stored.erase(s);
            wasStored = true;
            ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
        } else {
            // Read-write: the open never waits for a writer, and as a writer
            // ourselves the fifo never reports EOF between task writes. Not
            // stored with systemd: the task's shim holds the fifo until we
            // release it, so what we leave unread across a restart waits in
            // the pipe, and systemd's fd store, which compares each fd added
            // with every fd stored, stays out of a start's path.
            const auto path = spool_.fifo(unit, kStreams[i]);
            fd.reset(::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
            if (!fd) {
                spdlog::error("Failed to open {}: {}; its logs are not collected", path, strerror(errno));
                return;
            }
        }
        (void)::fcntl(fd.get(), F_SETPIPE_SZ, kPipeSize);
        auto& s = task->streams[i];
        s.stored = wasStored;
        if (info->forward) {
            const auto& to = i == 0 ? info->forward->stdoutPath : info->forward->stderrPath;
            s.collector =
                std::make_unique<ForwardCollector>(std::move(fd), to, static_cast<uid_t>(info->forward->uid));
        } else {
            Rotator rotator(info->logDir, wire::logFileBase(info->task, kStreams[i]), info->maxFiles,
                            static_cast<uint64_t>(info->maxFileSizeMb) << 20);
            auto files = std::make_unique<StreamCollector>(std::move(fd), std::move(rotator));
            if (auto r = files->open(); !r)
                spdlog::error("Failed to open the log of {} {}: {}; retrying while its output is dropped", unit,
                              kStreams[i], r.error().message);
            s.collector = std::move(files);
        }
        s.watch = loop_.addFd(s.collector->fifoFd(), POLLIN, [this, unit, i](short) { onFifoReadable(unit, i); });
    }
    if (info->journal) startJournal(*task);
    done_.erase(unit);
    journalDone_.erase(unit);
    ::unlink(doneRecord(unit).c_str());
    if (info->forward)
        spdlog::debug("Forwarding the output of {} to '{}' and '{}'", unit, info->forward->stdoutPath,
                      info->forward->stderrPath);
    else
        spdlog::debug("Collecting the logs of {} into {}", unit, info->logDir);
    tasks_[unit] = std::move(task);
    if (events_) events_->tasksChanged();
    if (info->exited) maybeComplete(unit);
}

void Streamer::startJournal(Task& t) {
    for (size_t i = 0; i < 2; ++i) {
        auto& s = t.streams[i];
        if (!s.collector) continue;
        JournalCopy::Options o;
        o.socketPath = options_.journalSocket;
        o.identifier = t.info.task;
        o.unit = t.info.unit;
        o.priority = i == 0 ? 6 : 3;  // info for stdout, err for stderr
        s.journal = std::make_unique<JournalCopy>(std::move(o));
        if (t.info.taskPid > 0) s.journal->setPid(static_cast<pid_t>(t.info.taskPid));
        s.collector->setTee([copy = s.journal.get()](const char* data, size_t size) { copy->append(data, size); });
    }
    spdlog::debug("Copying the output of {} to the journal", t.info.unit);
}

void Streamer::syncJournalWatch(Task& t, size_t i) {
    auto& s = t.streams[i];
    const int want = s.journal && s.journal->blocked() ? s.journal->fd() : -1;
    if (s.journalWatch && s.journalWatchFd != want) {
        loop_.removeFd(s.journalWatch);
        s.journalWatch = 0;
        s.journalWatchFd = -1;
    }
    if (want < 0 || s.journalWatch) return;
    s.journalWatchFd = want;
    s.journalWatch = loop_.addFd(want, POLLOUT, [this, unit = t.info.unit, i](short) {
        auto it = tasks_.find(unit);
        if (it == tasks_.end()) return;
        it->second->streams[i].journal->flush();
        syncJournalWatch(*it->second, i);
    });
}

bool Streamer::journalSettled(Task& t) {
    bool waiting = false;
    for (size_t i = 0; i < 2; ++i) {
        auto& s = t.streams[i];
        if (!s.journal) continue;
        s.journal->flush();
        syncJournalWatch(t, i);
        waiting = waiting || !s.journal->settled();
    }
    if (!waiting) return true;
    // Released, the shim reaps the task and its pid names nothing: journald
    // must have read the last lines first. A slow journald gets a bound.
    // (Polled: journald's reading raises no event on our socket.)
    if (keepWaiting(t, &Task::journalWait, options_.journalSettleLimit, std::chrono::milliseconds(20))) return false;
    for (size_t i = 0; i < 2; ++i) {
        auto& s = t.streams[i];
        if (!s.journal || s.journal->settled()) continue;
        s.journal->abandon();
        syncJournalWatch(t, i);
        spdlog::warn("journald did not read the last {} lines of {} within {} ms; the journal's copy ends there",
                     kStreams[i], t.info.unit, options_.journalSettleLimit.count());
    }
    return true;
}

common::Result<JournalState> Streamer::journalState(const std::string& allocId, const std::string& task) const {
    for (const auto& [unit, t] : tasks_) {
        if (t->info.allocId != allocId || t->info.task != task) continue;
        JournalState state;
        for (const auto& s : t->streams) {
            if (!s.journal) continue;
            state.enabled = true;
            state.counts.bytesSent += s.journal->counts().bytesSent;
            state.counts.linesDropped += s.journal->counts().linesDropped;
            state.counts.bytesDropped += s.journal->counts().bytesDropped;
        }
        return state;
    }
    for (const auto& [unit, t] : done_) {
        if (t.allocId != allocId || t.task != task) continue;
        if (auto it = journalDone_.find(unit); it != journalDone_.end()) return it->second;
        // Completed before this streamer started: the counts went with the last one.
        return JournalState{t.journal, {}};
    }
    return common::makeError(common::errors::kNoSuchTask,
                             "no logs are collected for task '" + task + "' of allocation '" + allocId + "'");
}

void Streamer::updateTask(Task& t, TaskLogs info) {
    const bool exited = info.exited && !t.info.exited;
    if (info.taskPid > 0 && info.taskPid != t.info.taskPid)
        for (size_t i = 0; i < 2; ++i)
            if (auto& s = t.streams[i]; s.journal) {
                // The pid places what waited for it.
                s.journal->setPid(static_cast<pid_t>(info.taskPid));
                s.journal->flush();
                syncJournalWatch(t, i);
            }
    t.info = std::move(info);
    if (exited) maybeComplete(t.info.unit);
}

void Streamer::dropTask(std::string unit) {
    auto it = tasks_.find(unit);
    if (it == tasks_.end()) return;
    for (size_t i = 0; i < 2; ++i) {
        auto& s = it->second->streams[i];
        if (s.watch) loop_.removeFd(s.watch);
        if (s.outWatch) loop_.removeFd(s.outWatch);
        if (s.journalWatch) loop_.removeFd(s.journalWatch);
        if (s.stored) common::unstoreFd(fdName(unit, i));
    }
    tasks_.erase(it);
    notifySessions(unit, true);
    if (events_) events_->tasksChanged();
}

void Streamer::drainStream(Task& t, size_t i) {
    auto& s = t.streams[i];
    const auto d = s.collector->drain(kDrainBudget);
    s.empty = d.empty;
    if (d.failed)
        spdlog::error("Failed to write the {} log of {}: {}; dropping its output until writing works again",
                      kStreams[i], t.info.unit, d.failed->message);
    if (d.recoveredAfterDropping)
        spdlog::warn("Writing the {} log of {} works again; {} bytes were dropped", kStreams[i], t.info.unit,
                     d.recoveredAfterDropping);
    if (d.moved) notifySessions(t.info.unit, false);
    if (s.journal) syncJournalWatch(t, i);
    if (d.blocked) awaitRoom(t, i);
}

void Streamer::awaitRoom(Task& t, size_t i) {
    auto& s = t.streams[i];
    const int out = s.collector->blockedOn();
    if (out < 0 || s.outWatch) return;
    // Level-triggered: the fifo's POLLIN would wake us for every byte the
    // task adds while we cannot move one.
    if (s.watch) loop_.removeFd(s.watch);
    s.watch = 0;
    s.outWatch = loop_.addFd(out, POLLOUT, [this, unit = t.info.unit, i](short) {
        auto it = tasks_.find(unit);
        if (it == tasks_.end()) return;
        auto& st = it->second->streams[i];
        loop_.removeFd(st.outWatch);
        st.outWatch = 0;
        st.watch = loop_.addFd(st.collector->fifoFd(), POLLIN, [this, unit, i](short) { onFifoReadable(unit, i); });
        onFifoReadable(unit, i);
    });
}

bool Streamer::forwardSettled(Task& t) {
    bool blocked = false;
    for (const auto& s : t.streams) blocked = blocked || s.outWatch;
    if (!blocked) {
        t.forwardWait.since.reset();
        return true;
    }
    // (Room wakes the stream by itself: the timer is only for the limit.)
    if (keepWaiting(t, &Task::forwardWait, options_.forwardSettleLimit, std::chrono::milliseconds(0))) return false;
    for (size_t i = 0; i < 2; ++i) {
        auto& s = t.streams[i];
        if (!s.outWatch) continue;
        s.collector->giveUp();
        loop_.removeFd(s.outWatch);
        s.outWatch = 0;
        s.watch = loop_.addFd(s.collector->fifoFd(), POLLIN, [this, unit = t.info.unit, i](short) {
            onFifoReadable(unit, i);
        });
        spdlog::warn("{} ended, and nothing took the last of its {} for {} ms; the rest is dropped", t.info.unit,
                     kStreams[i], options_.forwardSettleLimit.count());
        for (int round = 0; round < kCompleteRounds && !s.empty; ++round) drainStream(t, i);
    }
    t.forwardWait.since.reset();
    return true;
}

bool Streamer::keepWaiting(Task& t, EndWait Task::*which, std::chrono::milliseconds limit,
                           std::chrono::milliseconds poll) {
    auto& w = t.*which;
    const auto now = common::EventLoop::Clock::now();
    if (!w.since) w.since = now;
    if (now - *w.since >= limit) return false;
    if (!w.timerSet) {
        w.timerSet = true;
        loop_.addTimer(poll.count() ? now + poll : *w.since + limit, [this, which, unit = t.info.unit] {
            auto it = tasks_.find(unit);
            if (it == tasks_.end()) return;
            (*it->second.*which).timerSet = false;
            maybeComplete(unit);
        });
    }
    return true;
}

void Streamer::onFifoReadable(const std::string& unit, size_t i) {
    auto it = tasks_.find(unit);
    if (it == tasks_.end()) return;
    drainStream(*it->second, i);
    if (it->second->info.exited && it->second->streams[i].empty) maybeComplete(unit);
}

void Streamer::maybeComplete(std::string unit) {
    auto it = tasks_.find(unit);
    if (it == tasks_.end()) return;
    Task& t = *it->second;
    // The task has exited and its scope is emptied, so once a read finds a
    // fifo empty no writer is left to add more.
    for (size_t i = 0; i < 2; ++i) {
        auto& s = t.streams[i];
        s.empty = false;
        for (int round = 0; round < kCompleteRounds && !s.empty && !s.outWatch; ++round) drainStream(t, i);
    }
    if (!forwardSettled(t)) return;  // room, or the timer, tries again
    for (const auto& s : t.streams)
        if (!s.empty) return;  // a straggler still writes: the next POLLIN tries again
    for (size_t i = 0; i < 2; ++i)
        if (auto* f = dynamic_cast<ForwardCollector*>(t.streams[i].collector.get()); f && f->dropped())
            spdlog::warn("{} bytes of the {} of {} did not reach {}", f->dropped(), kStreams[i], t.info.unit,
                         f->path());
    if (!journalSettled(t)) return;  // a timer tries again
    const TaskLogs info = t.info;
    if (t.streams[0].journal) {
        JournalState state{true, {}};
        for (const auto& s : t.streams) {
            state.counts.bytesSent += s.journal->counts().bytesSent;
            state.counts.linesDropped += s.journal->counts().linesDropped;
            state.counts.bytesDropped += s.journal->counts().bytesDropped;
        }
        if (!forgotten_.contains(unit)) journalDone_[unit] = state;
        spdlog::log(state.counts.linesDropped ? spdlog::level::warn : spdlog::level::info,
                    "The journal's copy of {}: {} bytes sent, {} lines ({} bytes) dropped", unit,
                    state.counts.bytesSent, state.counts.linesDropped, state.counts.bytesDropped);
    }
    if (forgotten_.erase(unit)) {
        // Nobody may read them any more: no record, and the files follow the retention.
        dropTask(unit);
        spool_.remove(unit);
        pruneLogDir(info.logDir);
        spdlog::info("Logs of {} complete; the task is forgotten already", unit);
        if (events_) events_->logsComplete(info.allocId, info.task);
        return;
    }
    // Record first, then release: a crash in between finds an exited spool
    // entry with an empty fifo and completes it again.
    if (auto r = common::writeFileAtomic(doneRecord(unit), describe(info)); !r)
        spdlog::warn("Failed to record the completed logs of {}: {}, ignoring", unit, r.error().message);
    done_[unit] = info;
    dropTask(unit);
    spool_.remove(unit);
    spdlog::info("Logs of {} complete", unit);
    if (events_) events_->logsComplete(info.allocId, info.task);
}

void Streamer::forget(const std::string& unit) {
    if (done_.count(unit)) {
        const auto logDir = done_[unit].logDir;
        dropDone(unit);
        pruneLogDir(logDir);
        return;
    }
    // Still draining what the task wrote before it exited: finish first.
    if (tasks_.count(unit)) forgotten_.insert(unit);
}

void Streamer::retainOnly(const std::set<std::string>& units) {
    std::set<std::string> dirs;
    for (auto it = done_.begin(); it != done_.end();) {
        if (units.contains(it->first)) {
            ++it;
            continue;
        }
        const auto unit = it++->first;
        dirs.insert(done_[unit].logDir);
        dropDone(unit);
    }
    for (const auto& [unit, t] : tasks_)
        if (t->info.exited && !units.contains(unit)) forgotten_.insert(unit);
    for (const auto& dir : dirs) pruneLogDir(dir);
}

void Streamer::dropDone(const std::string& unit) {
    done_.erase(unit);
    journalDone_.erase(unit);
    if (::unlink(doneRecord(unit).c_str()) < 0 && errno != ENOENT)
        spdlog::warn("Failed to remove {}: {}, ignoring", doneRecord(unit), strerror(errno));
    spdlog::info("Forgot the logs of {}", unit);
}

void Streamer::pruneLogDir(const std::string& logDir) {
    for (const auto& [unit, t] : tasks_)
        if (t->info.logDir == logDir) return;
    for (const auto& [unit, t] : done_)
        if (t.logDir == logDir) return;
    auto r = removeLogDir(logDir);
    if (!r) {
        spdlog::warn("Failed to remove the log directory {}: {}, ignoring", logDir, r.error().message);
        return;
    }
    if (!*r) return;  // never made: its tasks' output went to Nomad's paths
    spdlog::info("Removed the log directory {} ({} files): its allocation's last task was forgotten", logDir, **r);
}

void Streamer::notifySessions(const std::string& unit, bool complete) {
    for (auto& [id, s] : sessions_) {
        if (s->unit() != unit) continue;
        if (complete)
            s->markComplete();
        else
            s->wake();
    }
}

common::Result<common::UniqueFd> Streamer::readLogs(const std::string& allocId, const std::string& task,
                                                    const std::string& stream, const std::string& origin,
                                                    int64_t offset, bool follow) {
    if (stream != "stdout" && stream != "stderr")
        return common::makeError(common::errors::kInvalidArgument, "stream must be \"stdout\" or \"stderr\", not \"" + stream + "\"");
    auto o = parseOrigin(origin);
    if (!o) return o.error();
    const TaskLogs* info = nullptr;
    bool complete = false;
    for (const auto& [unit, t] : tasks_)
        if (t->info.allocId == allocId && t->info.task == task) info = &t->info;
    if (!info)
        for (const auto& [unit, t] : done_)
            if (t.allocId == allocId && t.task == task) {
                info = &t;
                complete = true;
            }
    if (!info)
        return common::makeError(common::errors::kNoSuchTask,
                                 "no logs are collected for task '" + task + "' of allocation '" + allocId + "'");
    if (info->forward)
        return common::makeError("LogsDisabled", "task '" + task + "' of allocation '" + allocId +
                                                     "' writes its output to its stdout_path and stderr_path "
                                                     "(Nomad's log fifos); taskscope keeps no files of it");
    if (sessions_.size() >= options_.maxSessions)
        return common::makeError(common::errors::kBusy, "too many log readers (" + std::to_string(sessions_.size()) + ")");
    const auto base = wire::logFileBase(info->task, stream);
    auto pos = locate(listLogFiles(info->logDir, base), *o, offset, "the " + stream + " log");
    if (!pos) return pos.error();

    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return common::errnoError("pipe", errno);
    common::UniqueFd readEnd(p[0]), writeEnd(p[1]);
    ::fcntl(writeEnd.get(), F_SETFL, O_NONBLOCK);
    (void)::fcntl(writeEnd.get(), F_SETPIPE_SZ, kPipeSize);
    const uint64_t id = nextSession_++;
    auto finished = [this, id] {
        // Destroyed from the loop, never from inside its own handler.
        loop_.addTimer(common::EventLoop::Clock::now(), [this, id] { sessions_.erase(id); });
    };
    auto session = std::make_unique<LogSession>(loop_, std::move(writeEnd), info->unit, info->logDir, base, *pos,
                                                follow, complete, std::move(finished));
    auto* s = session.get();
    sessions_[id] = std::move(session);
    s->begin();
    return readEnd;
}

}  // namespace taskscope::stream::logs
