#pragma once
// inotify on the spool directory: a description appearing or replaced
// (written to a temporary name and renamed: IN_MOVED_TO), or deleted.

#include <string>
#include <vector>

#include "common/result.hpp"
#include "common/unique_fd.hpp"

namespace taskscope::stream::logs {

struct SpoolEvent {
    std::string unit;
    bool removed = false;
};

class SpoolWatcher {
public:
    /// Starts watching; events from here on are reported by read().
    common::Result<void> start(const std::string& dir);
    int fd() const { return fd_.get(); }
    /// The events queued now (the fd is non-blocking).
    std::vector<SpoolEvent> read();

private:
    common::UniqueFd fd_;
};

}  // namespace taskscope::stream::logs
