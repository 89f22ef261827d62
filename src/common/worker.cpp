#include "common/worker.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace taskscope::common {

Worker::Worker(EventLoop& loop, size_t threads)
    : loop_(loop), maxThreads_(threads == 0 ? 1 : threads), wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (!wake_) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    watch_ = loop_.addFd(wake_.get(), POLLIN, [this](short) { deliver(); });
}

Worker::~Worker() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        todo_.clear();
    }
    work_.notify_all();
    for (auto& t : threads_) t.join();
    loop_.removeFd(watch_);
}

void Worker::submit(Work work) {
    {
        std::lock_guard lock(mutex_);
        todo_.push_back(std::move(work));
        // A thread more only when none waits and the limit allows.
        if (waiting_ < todo_.size() && threads_.size() < maxThreads_) threads_.emplace_back([this] { runThread(); });
    }
    work_.notify_one();
}

void Worker::waitIdle() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return todo_.empty() && running_ == 0; });
}

void Worker::runThread() {
    std::unique_lock lock(mutex_);
    for (;;) {
        ++waiting_;
        work_.wait(lock, [this] { return stopping_ || !todo_.empty(); });
        --waiting_;
        if (stopping_) return;
        auto work = std::move(todo_.front());
        todo_.pop_front();
        ++running_;
        lock.unlock();
        auto result = work();
        lock.lock();
        --running_;
        done_.push_back(std::move(result));
        const uint64_t one = 1;
        // Cannot fail but on a full counter, which 2^64-1 wakes never reach.
        [[maybe_unused]] auto n = ::write(wake_.get(), &one, sizeof one);
        if (todo_.empty() && running_ == 0) idle_.notify_all();
    }
}

void Worker::deliver() {
    uint64_t count;
    [[maybe_unused]] auto n = ::read(wake_.get(), &count, sizeof count);
    std::deque<std::function<void()>> ready;
    {
        std::lock_guard lock(mutex_);
        ready.swap(done_);
    }
    for (auto& f : ready)
        if (f) f();
}

}  // namespace taskscope::common
