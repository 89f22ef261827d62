#pragma once
// The one way daemon code runs work off its event loop: blocking work goes
// to threads of a Worker, and each result comes back to the loop's thread
// as a closure, so the loop never waits for it and its state needs no
// locks. A daemon has a few, each for one kind of work that may block
// (the manager: a start's files and spawn, cgroup writes and reads that
// wait behind the kernel's cgroup lock, the durable writes of its state,
// gRPC probes of plugins, CNI plugins of networks).
//
// With one thread, work runs and completes in the order submitted; with
// more, up to that many pieces run at once and complete as they finish.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "common/event_loop.hpp"
#include "common/unique_fd.hpp"

namespace taskscope::common {

class Worker {
public:
    /// `work` runs on a worker thread; the closure it returns runs on the loop.
    using Work = std::function<std::function<void()>()>;

    /// `threads`: how many pieces of work may run at once; threads start
    /// as work needs them.
    explicit Worker(EventLoop& loop, size_t threads = 1);
    /// Finishes the work under way; queued work is dropped, and no result
    /// is delivered any more.
    ~Worker();
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    void submit(Work work);
    /// Blocks until no work is queued or running (their results are not
    /// delivered by this); for a shutdown that must finish what was asked.
    void waitIdle();

private:
    void runThread();
    void deliver();

    EventLoop& loop_;
    const size_t maxThreads_;
    UniqueFd wake_;  ///< eventfd: results are waiting
    uint64_t watch_ = 0;
    std::mutex mutex_;
    std::condition_variable work_;
    std::condition_variable idle_;
    std::deque<Work> todo_;
    std::deque<std::function<void()>> done_;
    size_t running_ = 0;  ///< pieces of work under way
    size_t waiting_ = 0;  ///< threads waiting for work
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace taskscope::common
