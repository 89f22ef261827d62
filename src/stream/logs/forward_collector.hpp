#pragma once
// One stream of a task started with stdout_path/stderr_path (Nomad's log
// fifos, which its logmon reads) whose output the journal copies too
// (issue 59): the streamer stands between, reading the spool fifo and
// writing the path, so it sees every byte it copies.
//
// The way out is opened as the shim would open it for the task (no
// symlink anywhere, owned by root or the task's user, one link; nothing
// there: a new file), and never by name again. A fifo is opened read-write,
// as the shim opens it: there is always a reader, so a logmon that is away
// (a Nomad client restarting) leaves what was written in the pipe for the
// next one instead of raising EPIPE. Fifo to fifo moves with splice(2), or
// with tee(2) and a read when the journal copies (the read takes exactly
// what the way out already has, so a crash between the two repeats bytes
// and never loses them). A full fifo stops the reading: the task's own
// writes then wait, exactly as when it writes Nomad's fifo itself.

#include <string>
#include <sys/types.h>

#include "common/unique_fd.hpp"
#include "stream/logs/output_collector.hpp"

namespace taskscope::stream::logs {

class ForwardCollector : public OutputCollector {
public:
    /// path: where the output goes ("": nowhere, as /dev/null); owner:
    /// the task's uid, which besides root may own it.
    ForwardCollector(common::UniqueFd fifo, std::string path, uid_t owner);

    Drained drain(uint64_t budget, Clock::time_point now = Clock::now()) override;
    int fifoFd() const override { return fifo_.get(); }
    int blockedOn() const override { return blocked_ ? out_.get() : -1; }
    void giveUp() override;
    uint64_t dropped() const override { return dropped_; }

    const std::string& path() const { return path_; }
    bool dropping() const { return dropping_; }

private:
    enum class Step { Moved, Empty, Blocked, WriteFailed };
    common::Result<void> openOut();
    Step pipeSome(size_t len, uint64_t& moved, int& err);
    Step copySome(size_t len, uint64_t& moved, int& err);
    /// EAGAIN from a move: the fifo empty, or the way out full?
    Step emptyOrBlocked() const;

    common::UniqueFd fifo_;
    std::string path_;
    uid_t owner_;
    common::UniqueFd out_;
    bool outIsPipe_ = false;
    bool blocked_ = false;
    bool dropping_ = false;
    bool gaveUp_ = false;
    bool tried_ = false;
    uint64_t dropped_ = 0;
    Clock::time_point lastTry_{};
};

}  // namespace taskscope::stream::logs
