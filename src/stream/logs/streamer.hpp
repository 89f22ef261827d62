#pragma once
// The streamer's domain: the tasks in the spool, their collectors, the
// readers, and the records of tasks whose logs are complete. Everything
// runs on one event loop; the D-Bus adaptor only converts.

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "stream/logs/collector.hpp"
#include "stream/logs/forward_collector.hpp"
#include "stream/logs/journal_copy.hpp"
#include "stream/logs/log_session.hpp"
#include "stream/logs/spool.hpp"
#include "stream/logs/spool_watcher.hpp"

namespace taskscope::stream::logs {

/// What the bus side publishes.
class StreamerEvents {
public:
    virtual ~StreamerEvents() = default;
    virtual void logsComplete(const std::string& allocId, const std::string& task) = 0;
    virtual void tasksChanged() = 0;
};

struct StreamerOptions {
    std::string spoolDir = "/run/taskscope/logs";
    std::string stateDir = "/var/lib/taskscope-streamer";
    size_t maxSessions = 256;
    std::string journalSocket = "/run/systemd/journal/stdout";
    /// How long a task's end waits for journald to read its last lines
    /// while the task's pid still names it; past it they are dropped.
    std::chrono::milliseconds journalSettleLimit{2000};
    /// How long an ended task's last output waits for its stdout_path or
    /// stderr_path (a Nomad log fifo nobody reads) to take it; past it the
    /// rest is dropped, counted, so that the task's logs complete.
    std::chrono::milliseconds forwardSettleLimit{30000};
};

/// The journal's copy of a task's output (log_journal), both streams together.
struct JournalState {
    bool enabled = false;
    JournalCounts counts;
};

class Streamer {
public:
    Streamer(common::EventLoop& loop, StreamerOptions options);
    ~Streamer();
    Streamer(const Streamer&) = delete;
    Streamer& operator=(const Streamer&) = delete;

    void attach(StreamerEvents& events) { events_ = &events; }

    /// Takes back the log fds stored before a restart (those the daemon
    /// passes: the exec sessions' are not ours), watches the spool and
    /// picks up every task in it. A stored fd no task claims is dropped.
    common::Result<void> start(std::map<std::string, common::UniqueFd> stored = {});

    /// A pipe whose read end streams the log (see org.taskscope.Streamer1.xml).
    common::Result<common::UniqueFd> readLogs(const std::string& allocId, const std::string& task,
                                              const std::string& stream, const std::string& origin, int64_t offset,
                                              bool follow);

    uint32_t taskCount() const { return static_cast<uint32_t>(tasks_.size()); }

    /// The manager forgot the task of `unit`: its done record goes, and its
    /// log files follow the retention (see dbus/org.taskscope.Streamer1.xml):
    /// an allocation's log directory goes with the last of its tasks the
    /// streamer knows. A task still being drained goes once it is drained.
    void forget(const std::string& unit);
    /// The manager has exactly these units: every task whose logs are
    /// complete and that is not among them was forgotten while we (or the
    /// manager's signal) were away. An exited task still being drained
    /// that is not among them goes once it is drained; a task not yet
    /// exited is left alone (the manager may not have published it yet).
    void retainOnly(const std::set<std::string>& units);
    /// Reads the whole spool as if every entry had changed: new entries are
    /// collected, changed ones updated (an exit completes the task once
    /// drained), and tasks whose entry is gone dropped. What the streamer
    /// does when the spool's change events overflowed; harmless when
    /// nothing was missed (the late events change nothing).
    void rescanSpool();
    /// The journal's copy of a task's output, while its logs are collected
    /// or on record; NoSuchTask when neither.
    common::Result<JournalState> journalState(const std::string& allocId, const std::string& task) const;
    /// How many tasks have complete logs on record.
    size_t doneCount() const { return done_.size(); }

private:
    struct Stream {
        std::unique_ptr<OutputCollector> collector;  ///< into files, or to the task's stdout_path/stderr_path
        uint64_t watch = 0;                           ///< POLLIN on the fifo (none while blocked)
        uint64_t outWatch = 0;                        ///< POLLOUT on the way out while it is full
        bool empty = false;
        bool stored = false;  ///< its fifo end is in systemd's fd store (kept there by a streamer before 0.2)
        std::unique_ptr<JournalCopy> journal;  ///< log_journal: the journal's copy
        uint64_t journalWatch = 0;             ///< POLLOUT on its socket while it waits for room
        int journalWatchFd = -1;               ///< the socket that watch is on
    };
    /// An ended task's bounded wait for something outside it.
    struct EndWait {
        std::optional<std::chrono::steady_clock::time_point> since;
        bool timerSet = false;  ///< a timer will try to complete the task again
    };
    struct Task {
        TaskLogs info;
        std::array<Stream, 2> streams;
        EndWait journalWait;  ///< for journald to read the last lines
        EndWait forwardWait;  ///< for its stdout_path/stderr_path to take the rest
    };

    void onSpoolEvents();
    void onSpoolEntry(const std::string& unit);
    void onSpoolEntryRemoved(const std::string& unit);
    /// Whether t's collectors read the fifos now at the spool's names for unit.
    bool readsFifosOf(const Task& t, const std::string& unit) const;
    void addTask(const std::string& unit, std::map<std::string, common::UniqueFd>& stored);
    void updateTask(Task& t, TaskLogs info);
    void dropTask(std::string unit);
    void onFifoReadable(const std::string& unit, size_t stream);
    void drainStream(Task& t, size_t stream);
    /// A full way out: the fifo's watch gives way to one for room there.
    void awaitRoom(Task& t, size_t stream);
    /// Whether no way out is full; false: room, or a timer, tries again.
    /// Past forwardSettleLimit after the task's end, what is left is
    /// dropped (counted) instead, and it is true.
    bool forwardSettled(Task& t);
    /// Whether t's wait (`which`, begun now if not yet) is still within
    /// limit; then a timer, after `poll` or at the limit's end when poll is
    /// 0, tries to complete t again. False once past the limit.
    bool keepWaiting(Task& t, EndWait Task::*which, std::chrono::milliseconds limit,
                     std::chrono::milliseconds poll);
    void startJournal(Task& t);
    /// Watches a copy's socket for room while bytes wait for it.
    void syncJournalWatch(Task& t, size_t stream);
    /// Whether journald has read all of t's copy; false: try again soon.
    bool journalSettled(Task& t);
    void maybeComplete(std::string unit);  // a copy: completing destroys the task that owns the name
    void notifySessions(const std::string& unit, bool complete);
    void loadDoneRecords();
    void dropDone(const std::string& unit);
    /// Removes logDir when no task the streamer knows writes or wrote there.
    void pruneLogDir(const std::string& logDir);
    std::string doneRecord(const std::string& unit) const;

    common::EventLoop& loop_;
    StreamerOptions options_;
    Spool spool_;
    SpoolWatcher watcher_;
    uint64_t watcherHandle_ = 0;
    StreamerEvents* events_ = nullptr;
    std::map<std::string, std::unique_ptr<Task>> tasks_;  // by unit
    std::map<std::string, TaskLogs> done_;                // by unit: logs complete
    std::map<std::string, JournalState> journalDone_;     // by unit: of done_ tasks, kept while they are
    std::set<std::string> forgotten_;                     // units forgotten while still drained
    std::map<uint64_t, std::unique_ptr<LogSession>> sessions_;
    uint64_t nextSession_ = 1;
};

}  // namespace taskscope::stream::logs
