#pragma once
// taskscopectl stats (src/cli/stats_command.cpp).

#include <sdbus-c++/sdbus-c++.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "wire/stats_wire.hpp"

namespace taskscope::cli {

/// `stats [--json] [--watch] [--interval MS|default] [ALLOC TASK]`; args
/// follow the command's name; json is the global --json.
int statsCommand(sdbus::IConnection& conn, const std::vector<std::string>& args, bool json);

/// One allocation's totals as `stats --alloc --json` writes them.
nlohmann::json allocationJson(const wire::AllocationStats& a);

/// One allocation's totals on one line (alloc stats, alloc status):
/// "tasks 2, cpu 198.6% (31.2 s used), memory 1.1MiB, pids 4"; "-" for a value
/// not measured.
std::string allocationLine(const wire::AllocationStats& a);

}  // namespace taskscope::cli
