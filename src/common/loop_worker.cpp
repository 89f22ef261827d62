#include "common/loop_worker.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace taskscope::common {

LoopWorker::LoopWorker(EventLoop& loop)
    : loop_(loop), wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (!wake_) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    watch_ = loop_.addFd(wake_.get(), POLLIN, [this](short) { deliver(); });
    thread_ = std::thread([this] { runWorker(); });
}

LoopWorker::~LoopWorker() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        todo_.clear();
    }
    cv_.notify_one();
    thread_.join();
    loop_.removeFd(watch_);
}

void LoopWorker::submit(Work work) {
    {
        std::lock_guard lock(mutex_);
        todo_.push_back(std::move(work));
    }
    cv_.notify_one();
}

void LoopWorker::runWorker() {
    for (;;) {
        Work work;
        {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [this] { return stopping_ || !todo_.empty(); });
            if (stopping_) return;
            work = std::move(todo_.front());
            todo_.pop_front();
        }
        auto result = work();
        {
            std::lock_guard lock(mutex_);
            done_.push_back(std::move(result));
        }
        const uint64_t one = 1;
        // Cannot fail but on a full counter, which 2^64-1 wakes never reach.
        [[maybe_unused]] auto n = ::write(wake_.get(), &one, sizeof one);
    }
}

void LoopWorker::deliver() {
    uint64_t count;
    [[maybe_unused]] auto n = ::read(wake_.get(), &count, sizeof count);
    std::deque<std::function<void()>> ready;
    {
        std::lock_guard lock(mutex_);
        ready.swap(done_);
    }
    for (auto& f : ready) f();
}

}  // namespace taskscope::common
