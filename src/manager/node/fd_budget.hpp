#pragma once
// The manager's file descriptor budget (docs/architecture.md, "Descriptor
// budget"). Per task it holds nothing: the task's shim holds its log fifos
// until the streamer has drained them, and exit and task records are read
// and written through short-lived descriptors (a task started by a manager
// before 0.2 keeps that manager's hold, 2, until it is drained). A start in
// flight needs a few for a moment. The unit's LimitNOFILE= is set from
// these numbers and the 10,000-task target.

#include <sys/types.h>

#include <cstddef>

#include "common/result.hpp"

namespace taskscope::manager {

/// Held for each task once it runs.
inline constexpr size_t kFdsPerTask = 0;
/// The peak of one start: the handshake pipes (4, each made as 2 ends
/// then moved above fd 10, so briefly 2 more) and a state file.
inline constexpr size_t kFdsPerStart = 7;
/// Never given to tasks: the bus connections, inotify, signalfd, journald,
/// the state files read during recovery, /proc reads.
inline constexpr size_t kFdsReserved = 64;

struct FdUsage {
    size_t open = 0;   ///< descriptors open in this process
    size_t limit = 0;  ///< RLIMIT_NOFILE's soft limit
};

/// Counts /proc/self/fd and reads RLIMIT_NOFILE.
common::Result<FdUsage> fdUsage();

/// ResourceExhausted, naming the numbers, when `usage` leaves less than a
/// start's peak plus the reserve; pure. `pendingStarts`: starts admitted
/// whose descriptors are not open yet (they wait for the start worker),
/// each counted at its peak.
common::Result<void> checkStartBudget(const FdUsage& usage, size_t pendingStarts = 0);

/// The same for this process, cheaply while far from the limit: counting
/// /proc/self/fd costs ~0.45 us per open descriptor (9 ms at 20,000, on
/// every start), so the kernel's descriptor table size (FDSize in
/// /proc/self/status, an upper bound of the count) answers first, and
/// only a table within reach of the limit is counted.
common::Result<void> checkStartBudget(size_t pendingStarts = 0);

}  // namespace taskscope::manager
