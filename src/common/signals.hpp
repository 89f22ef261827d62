#pragma once
// Signal names as people and Nomad job specs write them.

#include <string>

#include "common/result.hpp"

namespace taskscope::common {

/// "SIGTERM", "TERM", "sigterm" or "15" -> 15; anything else is an
/// InvalidSignal error.
Result<int> parseSignal(const std::string& text);

/// 15 -> "SIGTERM"; unknown numbers print as "SIG<n>".
std::string signalName(int signal);

}  // namespace taskscope::common
