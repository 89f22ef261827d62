#pragma once
// Where a read of a rotated log starts: the arithmetic of origin and offset
// across the files <base>.<N> (pure; the caller lists the files).

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "stream/logs/rotator.hpp"

namespace taskscope::stream::logs {

enum class Origin { Start, End };

/// "start" or "end"; InvalidArgument otherwise.
common::Result<Origin> parseOrigin(const std::string& s);

/// A byte of the log: a file and an offset in it.
struct LogPosition {
    uint64_t index = 0;
    uint64_t offset = 0;
    bool operator==(const LogPosition&) const = default;
};

/// The position `offset` bytes from `origin` over `files` (ascending by
/// index, the oldest kept first). From Start the offset may reach the end
/// but not pass it; from End it counts back and one larger than the log
/// starts at its first byte. A position at the end of a file is given as
/// that file's end; the reader moves on to the next file from there. An
/// empty log is position {0, 0}. `what` names the log in error messages.
common::Result<LogPosition> locate(const std::vector<LogFile>& files, Origin origin, int64_t offset,
                                   const std::string& what);

/// The file after `index` to read next (the lowest kept index above it);
/// false when there is none yet.
bool nextFile(const std::vector<LogFile>& files, uint64_t index, uint64_t& next);

}  // namespace taskscope::stream::logs
