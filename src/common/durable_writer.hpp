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
// A round holds at most kRoundCap operations: a drain asks for thousands
// (each forget removes four files), and one round of them held the disk
// for seconds. A write asked with Priority::First (the record a start
// waits for before its task runs) goes in the next round ahead of the
// operations waiting, and that round takes at most kFirstRoundExtra of
// them: a round of 256 removals and its two syncfs took seconds in a
// 2,000-task drain, and a start waited for two such rounds, the one under
// way and its own. A waiting operation on the same path goes with it,
// ahead of it. So operations on one path apply in the order asked; of
// several for one path in a round only the last is done (each still
// completes). Completions run on the event loop, in the order applied.
// Asked from the loop's thread only.

#include <cstdint>
#include <deque>
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
    enum class Priority { Normal, First };
    /// At most this many operations go in one round.
    static constexpr size_t kRoundCap = 256;
    /// At most this many waiting operations join a round of First writes.
    static constexpr size_t kFirstRoundExtra = 32;

    explicit DurableWriter(EventLoop& loop);
    /// Finishes every operation asked (their completions are not run).
    ~DurableWriter();
    DurableWriter(const DurableWriter&) = delete;
    DurableWriter& operator=(const DurableWriter&) = delete;

    /// Replaces `path` with `content` (created with `mode`).
    void write(std::string path, std::string content, unsigned mode, Done done = {},
               Priority priority = Priority::Normal);
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

    void enqueue(Op op, Priority priority = Priority::Normal);
    /// Hands what is queued to the worker as one round, unless one runs.
    void startRound();
    static void applyRound(std::vector<Op>& round);

    std::deque<Op> queue_;   ///< asked while a round ran, in order: the next rounds
    std::vector<Op> first_;  ///< asked with Priority::First: the next round's first
    bool busy_ = false;      ///< a round is on the worker
    /// Expires with this writer: a round's result delivered after it does nothing.
    std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
    Worker worker_;  ///< last: its thread stops before the rest goes
};

}  // namespace taskscope::common
