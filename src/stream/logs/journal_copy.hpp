#pragma once
// The journal's copy of one stream of one task (a spec's log_journal).
// The bytes the collector moved into the task's log file are handed here
// and sent to journald's stream socket (/run/systemd/journal/stdout), each
// send carrying SCM_CREDENTIALS with the task's own pid. journald reads
// those credentials on every message and looks the pid's cgroup up itself,
// so the lines land in the journal of the task's scope (and slice), rate
// limited as that unit: no field of ours says which unit, and a task cannot
// forge one. The stream header's unit is the scope too: journald uses it
// only when the pid's cgroup cannot be read, as for a zombie on cgroup v1,
// and only from a root peer. (Proven on systemd 252 and 257: the pid is
// read per message since systemd 244, journald-stream.c; a reaped pid
// makes sendmsg fail with ESRCH, a zombie is still looked up.)
//
// The files stay the complete copy: nothing here ever blocks. What the
// socket does not take at once waits in a bounded queue, and what does
// not fit is dropped as whole lines and counted (a line already half sent
// is ended where it was cut, as journald cuts one past LineMax). journald
// gone (stopped, restarting) drops the queue, counted, and the next bytes
// connect again, at most once a second.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "common/unique_fd.hpp"

namespace taskscope::stream::logs {

struct JournalCounts {
    uint64_t bytesSent = 0;     ///< handed to journald's socket (the header not counted)
    uint64_t linesDropped = 0;  ///< lines of which some bytes never reached the socket
    uint64_t bytesDropped = 0;
};

class JournalCopy {
public:
    using Clock = std::chrono::steady_clock;

    struct Options {
        std::string socketPath = "/run/systemd/journal/stdout";
        std::string identifier;  ///< SYSLOG_IDENTIFIER: the task's name
        std::string unit;        ///< the task's scope: journald's fallback for a pid it cannot place
        int priority = 6;        ///< 6 (info) for stdout, 3 (err) for stderr
        size_t maxQueued = 256 << 10;
        std::string proc = "/proc";  ///< where the task's uid and gid are read
    };

    explicit JournalCopy(Options options) : o_(std::move(options)) {}

    /// The task's pid, once its spool description names it: nothing is
    /// sent before (it waits in the queue), since the pid is what places it.
    void setPid(pid_t pid);
    pid_t pid() const { return pid_; }

    /// What the task wrote next: queued and sent as far as the socket takes it.
    void append(const char* data, size_t size, Clock::time_point now = Clock::now());
    /// Sends what is queued, as far as the socket takes it.
    void flush(Clock::time_point now = Clock::now());
    /// Bytes wait for the socket to take more: watch fd() for POLLOUT.
    bool blocked() const { return blocked_ && !queue_.empty(); }
    int fd() const { return sock_.get(); }
    /// Nothing is queued and journald has read everything sent: the task's
    /// pid may go (journald looks it up when it reads).
    bool settled() const;
    /// The task's end, when journald did not settle in time: what is
    /// queued is dropped and counted.
    void abandon();

    const JournalCounts& counts() const { return counts_; }

private:
    bool connect(Clock::time_point now);
    void disconnect();
    void dropQueuedOnly();
    /// Drops [data, data + size) of the task's bytes, counting its lines.
    void drop(const char* data, size_t size);
    /// Queues what fits, whole lines; drops the rest.
    void queue(const char* data, size_t size);
    bool readIdentity();

    Options o_;
    common::UniqueFd sock_;
    pid_t pid_ = 0;
    uid_t uid_ = 0;
    gid_t gid_ = 0;
    bool identityRead_ = false;
    bool unattributable_ = false;  ///< the pid is gone: nothing more can be placed
    std::string queue_;            ///< the header first after a connect, then the task's bytes
    size_t headerLeft_ = 0;        ///< bytes of the header at the queue's front
    bool blocked_ = false;
    bool midLine_ = false;   ///< the last byte given to the socket's stream was not a newline
    bool skipping_ = false;  ///< dropping up to the end of a line whose start was dropped
    bool lineCounted_ = false;  ///< the current line is already counted as dropped
    Clock::time_point lastConnect_{};
    bool triedConnect_ = false;
    JournalCounts counts_;
};

}  // namespace taskscope::stream::logs
