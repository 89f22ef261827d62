#pragma once
// Atomic, durable file replacement off the event loop, with group commit.
//
// Each write replaces its file atomically (a temporary file renamed over
// it) and is on disk when its completion runs. The work happens on a
// Worker of its own (common/worker.hpp): a daemon whose loop waited for fsync answered its
// readers after the disk, and a journal commit in a busy guest takes tens
// of milliseconds (seen in the test bed: ListTasks p99 of seconds while
// 16 starts ran). Everything asked while a round ran is written in the
// next round with one syncfs before the renames and one after, however
// many files it holds, so N concurrent starts cost two commits, not 2N.
//
// Operations apply in the order asked; of several for one path in a round
// only the last is done (each still completes). Completions run on the
// event loop, in order. Asked from the loop's thread only.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "common/worker.hpp"

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
    /// Hands what is queued to the worker as one round, unless one runs.
    void startRound();
    static void applyRound(std::vector<Op>& round);

    std::vector<Op> queue_;  ///< asked while a round ran: the next round
    bool busy_ = false;      ///< a round is on the worker
    /// Expires with this writer: a round's result delivered after it does nothing.
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
    Worker worker_;  ///< last: its thread stops before the rest goes
};

}  // namespace taskscope::common
