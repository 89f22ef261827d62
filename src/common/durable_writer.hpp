#pragma once
// Atomic, durable file replacement off the event loop, with group commit.
//
// Each write replaces its file atomically (a temporary file renamed over
// it) and is on disk when its completion runs. The work happens on a
// thread of its own: a daemon whose loop waited for fsync answered its
// readers after the disk, and a journal commit in a busy guest takes tens
// of milliseconds (seen in the test bed: ListTasks p99 of seconds while
// 16 starts ran). Everything asked while a round ran is written in the
// next round with one syncfs before the renames and one after, however
// many files it holds, so N concurrent starts cost two commits, not 2N.
//
// Operations apply in the order asked; of several for one path in a round
// only the last is done (each still completes). Completions run on the
// event loop, in order.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "common/unique_fd.hpp"

namespace taskscope::common {

class DurableWriter {
public:
    using Done = std::function<void(Result<void>)>;

    explicit DurableWriter(EventLoop& loop);
    /// Finishes every operation asked (their completions are not run).
    ~DurableWriter();
    DurableWriter(const DurableWriter&) = delete;
    DurableWriter& operator=(const DurableWriter&) = delete;

    /// Replaces `path` with `content` (created with `mode`).
    void write(std::string path, std::string content, unsigned mode, Done done = {});
    /// Removes `path` (a missing file is fine), in order with the writes.
    void remove(std::string path, Done done = {});
    /// Blocks until everything asked so far is on disk; runs no completion.
    void flush();

private:
    struct Op {
        std::string path;
        std::string content;
        unsigned mode = 0;
        bool remove = false;
        Done done;
        Result<void> result;
    };

    void enqueue(Op op);
    void run();
    void applyRound(std::vector<Op>& round);
    void deliver();

    EventLoop& loop_;
    UniqueFd wake_;  ///< eventfd: the worker tells the loop completions wait
    uint64_t watch_ = 0;
    std::mutex mutex_;
    std::condition_variable work_;
    std::condition_variable idle_;
    std::deque<Op> queue_;
    std::vector<Op> completed_;
    bool busy_ = false;
    bool stopping_ = false;
    std::thread worker_;
};

}  // namespace taskscope::common
