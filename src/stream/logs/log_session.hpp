#pragma once
// One ReadLogs caller: the write end of its pipe, fed from the rotated
// files with splice(2) from the event loop. The pipe's write end is
// non-blocking and nothing is buffered in the daemon: a slow reader only
// leaves its session waiting for POLLOUT. A following session idles at
// the end of the log until the collector writes more (wake()) or the task
// is complete (markComplete()).

#include <cstdint>
#include <functional>
#include <string>

#include "common/event_loop.hpp"
#include "common/unique_fd.hpp"
#include "stream/logs/log_reader.hpp"

namespace taskscope::stream::logs {

class LogSession {
public:
    LogSession(common::EventLoop& loop, common::UniqueFd pipe, std::string unit, std::string dir, std::string base,
               LogPosition start, bool follow, bool complete, std::function<void()> finished);
    ~LogSession();
    LogSession(const LogSession&) = delete;
    LogSession& operator=(const LogSession&) = delete;

    void begin() { pump(); }
    /// The log grew.
    void wake();
    /// Nothing more will be written: a follower ends at the end.
    void markComplete();
    const std::string& unit() const { return unit_; }
    bool done() const { return done_; }

private:
    void pump();
    bool openCurrent();
    void watch(short events);
    void finish();

    common::EventLoop& loop_;
    common::UniqueFd pipe_;
    std::string unit_;
    std::string dir_;
    std::string base_;
    uint64_t index_;
    uint64_t offset_;
    bool follow_;
    bool complete_;
    std::function<void()> finished_;
    common::UniqueFd file_;
    uint64_t watch_ = 0;
    bool idle_ = false;
    bool done_ = false;
};

}  // namespace taskscope::stream::logs
