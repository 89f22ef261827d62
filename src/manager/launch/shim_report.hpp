#pragma once
// The task shim's report lines (shim/shim_protocol.h: "pid N", then
// "started", "execfailed ERRNO STEP" or "error ERRNO STEP"), read: cut
// from the report pipe, and each line's meaning. Nothing of the spawn, so
// that fuzz/ (shim_report) links it alone. A line's bytes quoted in an
// error are printable ASCII, any other byte \xNN.

#include <sys/types.h>

#include <optional>
#include <string>

#include "common/result.hpp"

namespace taskscope::manager {

/// The next '\n'-terminated line from `fd`, read in blocks; bytes past
/// the line stay in `pending` for the next call. Internal when the writer
/// closes before a full line or the line is longer than the shim ever
/// writes (SHIM_REPORT_LINE_MAX, its newline included).
common::Result<std::string> readReportLine(int fd, std::string& pending);

/// The same for a non-blocking `fd` watched by the event loop: nullopt
/// while the line is not complete yet.
common::Result<std::optional<std::string>> takeReportLine(int fd, std::string& pending);

/// The shim's first line: "pid N" exactly, N decimal from 2 (the task is
/// the shim's child), as the shim writes it. Internal quoting the line
/// otherwise ("error ERRNO STEP": the shim could not fork the task).
common::Result<pid_t> parsePidLine(const std::string& line);

/// The release's outcome: "started"; ExecFailed for "execfailed ERRNO
/// STEP" (ERRNO 1..4095, STEP one word or none), Internal for "error
/// ERRNO STEP" and anything else.
common::Result<void> acceptRelease(const std::string& line);

}  // namespace taskscope::manager
