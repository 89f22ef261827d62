#pragma once
// The exit record a task's shim writes (<state>/exits/<unit>), read back.

#include <string>

#include "common/result.hpp"
#include "task/task_record.hpp"

namespace taskscope::manager {

/// Parses the shim's key=value exit file.
common::Result<task::ExitStatus> parseExitFile(const std::string& text);

}  // namespace taskscope::manager
