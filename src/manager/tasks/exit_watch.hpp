#pragma once
// How the manager learns that tasks ended, as events: its shims exiting
// (SIGCHLD: they are its children until it restarts), their exit records
// appearing (inotify on the exits directory), the streamer being done with
// a task's output (inotify on the spool directory), a record read (again,
// a few times, when it cannot be), and a task without a shim whose scope
// has emptied. It keeps no task state of its own beyond what a pending
// read or watch needs; the registry decides what each event means.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "common/worker.hpp"
#include "manager/records/state_store.hpp"
#include "task/task_record.hpp"

namespace taskscope::manager {

/// What the exit watch tells (the registry implements it).
class ExitEvents {
public:
    virtual ~ExitEvents() = default;
    /// Children that ended, reaped in one wakeup (one pass over the tasks
    /// for all of them: a full node's stop reaps thousands).
    virtual void shimsReaped(const std::set<pid_t>& pids) = 0;
    /// A shim put the unit's exit record in place (or, while a task without
    /// a shim was watched, it appeared).
    virtual void exitRecorded(const std::string& unit) = 0;
    /// The streamer deleted the unit's spool description: done with its output.
    virtual void spoolDrained(const std::string& unit) = 0;
    /// collect()'s outcome: the record, or why it could not be read after
    /// every retry (the task has ended in an unknown way).
    virtual void exitRead(const std::string& unit, common::Result<task::ExitStatus> status) = 0;
    /// A task without a shim whose scope has no process left.
    virtual void orphanEnded(const std::string& unit) = 0;
};

class ExitWatch {
public:
    ExitWatch(common::EventLoop& loop, const StateStore& store, std::string spoolDir, common::Worker& cgroupWorker,
              ExitEvents& events);
    ~ExitWatch();
    ExitWatch(const ExitWatch&) = delete;
    ExitWatch& operator=(const ExitWatch&) = delete;

    /// Starts watching, before recovery's scan (an exit written during it
    /// is seen): SIGCHLD through a signalfd, the exits and spool
    /// directories through inotify.
    common::Result<void> start();

    /// Whether the unit's exit record is there.
    bool exitRecordExists(const std::string& unit) const;

    /// Reads the unit's exit record; one that cannot be read is read again
    /// after 50, 100, 200, 400 ms (the shim replaces it atomically, so a
    /// failed read is the disk or a lack of descriptors). exitRead hears
    /// the outcome.
    void collect(const std::string& unit);

    /// Watches a task without a shim: orphanEnded once its scope
    /// (`processesFile`) lists no process (its exit record, should one
    /// appear after all, is the exits directory's event as any other). On
    /// cgroup v2 the kernel says when the scope's `populated` changes
    /// (`eventsFile`, its cgroup.events: a file modified event), and the
    /// scope is looked at then; v1 has no such event ("" here), and it is
    /// looked at once a second. The read of the cgroup file is the cgroup
    /// worker's.
    void watchOrphan(const std::string& unit, std::string processesFile, const std::string& eventsFile);
    bool watchingOrphan(const std::string& unit) const { return orphans_.count(unit) > 0; }

    /// Whatever is pending for the unit stops (its task ended or went).
    void forget(const std::string& unit);

private:
    struct Reading {
        int failures = 0;
        uint64_t timer = 0;
    };
    void reap();
    void onDirEvent();
    void read(const std::string& unit);
    void lookAtOrphan(const std::string& unit);
    void onOrphanEvent(int wd, bool watchGone);
    void endOrphanWatch(const std::string& unit);

    common::EventLoop& loop_;
    const StateStore& store_;
    std::string spoolDir_;
    common::Worker& cgroupWorker_;
    ExitEvents& events_;
    int signalFd_ = -1;
    int inotifyFd_ = -1;
    int spoolWd_ = -1;
    uint64_t signalWatch_ = 0;
    uint64_t inotifyWatch_ = 0;
    std::map<std::string, Reading> reading_;   ///< exit records being read again
    static constexpr int kNoWatch = -1;    ///< v1: looked at once a second
    static constexpr int kWatchGone = -2;  ///< the cgroup was removed with its watch
    struct Orphan {
        std::string processesFile;
        int wd = kNoWatch;    ///< its cgroup.events' inotify watch (v2)
        uint64_t timer = 0;   ///< its next look (v1)
        bool looking = false;     ///< a read is on the cgroup worker
        bool lookAgain = false;   ///< an event came meanwhile
    };
    std::map<std::string, Orphan> orphans_;
    std::map<int, std::string> orphanWds_;  ///< watch -> unit
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
};

}  // namespace taskscope::manager
