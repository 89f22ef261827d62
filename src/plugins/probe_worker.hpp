#pragma once
// Runs blocking work (gRPC calls to plugins) on one thread of its own and
// hands each result back to the event loop's thread, so the manager's loop
// never waits for a plugin and the registry needs no locks.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "common/event_loop.hpp"
#include "common/unique_fd.hpp"

namespace taskscope::plugins {

class ProbeWorker {
public:
    /// `work` runs on the worker; the closure it returns runs on the loop.
    using Work = std::function<std::function<void()>()>;

    explicit ProbeWorker(common::EventLoop& loop);
    ~ProbeWorker();  ///< finishes the work under way; queued work is dropped
    ProbeWorker(const ProbeWorker&) = delete;
    ProbeWorker& operator=(const ProbeWorker&) = delete;

    void submit(Work work);

private:
    void runWorker();
    void deliver();

    common::EventLoop& loop_;
    common::UniqueFd wake_;  ///< eventfd: results are waiting
    uint64_t watch_ = 0;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<Work> todo_;
    std::deque<std::function<void()>> done_;
    bool stopping_ = false;
    std::thread thread_;  ///< last: starts once the rest exists
};

}  // namespace taskscope::plugins
