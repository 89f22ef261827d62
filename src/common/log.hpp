#pragma once
// Logging setup shared by the daemons: the journal when systemd connected
// stderr to it (JOURNAL_STREAM), a plain stderr sink otherwise.

#include <string>

namespace taskscope::common {

/// Installs the default spdlog logger named `ident`; debug when verbose.
void setupLogging(const std::string& ident, bool verbose);

}  // namespace taskscope::common
