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

/// What one read found. `overflowed`: the kernel dropped events (more
/// changes came than fs.inotify.max_queued_events holds, as when thousands
/// of tasks end at once), so the events are not the whole story and only a
/// scan of the directory is.
struct SpoolEvents {
    std::vector<SpoolEvent> events;
    bool overflowed = false;
};

class SpoolWatcher {
public:
    /// Starts watching; events from here on are reported by read().
    common::Result<void> start(const std::string& dir);
    int fd() const { return fd_.get(); }
    /// The events queued now (the fd is non-blocking).
    SpoolEvents read();

private:
    common::UniqueFd fd_;
};

}  // namespace taskscope::stream::logs
