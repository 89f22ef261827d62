#pragma once
// What a streamer that restarts needs to take over its predecessor's exec
// sessions: one small JSON file per running interactive session
// (<dir>/<session>.json, written before StartExec replies, removed with the
// session's result) and the session numbers already handed out
// (<dir>/next-session), so that a number never names two sessions. The
// descriptors that go with a record wait in systemd's fd store under the
// names below.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace taskscope::stream::exec {

struct SessionRecord {
    uint64_t session = 0;
    std::string allocId;
    std::string task;
    std::string owner;  ///< the caller's unique bus name
    bool tty = false;
    pid_t keeper = 0;  ///< the streamer's child that waits for the command
    pid_t leader = 0;  ///< the command: its pid and process group
    uint64_t keeperStart = 0;  ///< the keeper's start time (processStartTime): its pid is its own while it matches
};

/// The fd store names of a session's keeper status pipe (its read end, and
/// a write end that keeps it from hanging up) and terminal master.
std::string statusFdName(uint64_t session);
std::string statusHoldFdName(uint64_t session);
std::string terminalFdName(uint64_t session);
/// Whether a stored fd's name is one of the above, and whose.
bool parseExecFdName(const std::string& name, uint64_t& session);

/// Where a session's descriptors wait for the next streamer: systemd's fd
/// store in the daemon (systemdDescriptorStore), a fake in tests.
class DescriptorStore {
public:
    virtual ~DescriptorStore() = default;
    /// Keeps a duplicate of fd under name.
    virtual common::Result<void> store(int fd, const std::string& name) = 0;
    virtual void drop(const std::string& name) = 0;
};
DescriptorStore& systemdDescriptorStore();

class SessionRecords {
public:
    /// An empty dir keeps nothing (a service that does not outlive itself).
    explicit SessionRecords(std::string dir) : dir_(std::move(dir)) {}

    /// Creates the directory (0700: a record names callers and tasks).
    common::Result<void> open();
    common::Result<void> save(const SessionRecord& record);
    void remove(uint64_t session);
    /// Every readable record; an unreadable one is logged and deleted.
    std::vector<SessionRecord> load();

    /// The first session number not handed out before (1 when none was).
    uint64_t firstUnused() const;
    /// Notes that numbers below upTo may have been handed out.
    common::Result<void> reserveBelow(uint64_t upTo);

private:
    std::string path(uint64_t session) const;

    std::string dir_;
};

}  // namespace taskscope::stream::exec
