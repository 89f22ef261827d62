#pragma once
// Runs blocking work on one thread of its own and hands each result back to
// the event loop's thread, in order, so the loop never waits for it and its
// state needs no locks. The manager has two: one for gRPC calls to plugins
// (which can block for seconds), one for the synchronous part of a start
// (fifos, the spool description, the shim's spawn: milliseconds each under
// emulation, which every read queued behind 128 starts used to wait for).

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "common/event_loop.hpp"
#include "common/unique_fd.hpp"

namespace taskscope::common {

class LoopWorker {
public:
    /// `work` runs on the worker; the closure it returns runs on the loop.
    using Work = std::function<std::function<void()>()>;

    explicit LoopWorker(EventLoop& loop);
    ~LoopWorker();  ///< finishes the work under way; queued work is dropped
    LoopWorker(const LoopWorker&) = delete;
    LoopWorker& operator=(const LoopWorker&) = delete;

    void submit(Work work);

private:
    void runWorker();
    void deliver();

    EventLoop& loop_;
    UniqueFd wake_;  ///< eventfd: results are waiting
    uint64_t watch_ = 0;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<Work> todo_;
    std::deque<std::function<void()>> done_;
    bool stopping_ = false;
    std::thread thread_;  ///< last: starts once the rest exists
};

}  // namespace taskscope::common
