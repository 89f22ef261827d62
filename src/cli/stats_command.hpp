#pragma once
// taskscopectl stats (src/cli/stats_command.cpp).

#include <sdbus-c++/sdbus-c++.h>

#include <string>
#include <vector>

namespace taskscope::cli {

/// `stats [--json] [--watch] [--interval MS|default] [ALLOC TASK]`; args
/// follow the command's name; json is the global --json.
int statsCommand(sdbus::IConnection& conn, const std::vector<std::string>& args, bool json);

}  // namespace taskscope::cli
