#pragma once
// The manager's configuration on disk: /etc/taskscope/manager.json, then
// every drop-in in manager.json.d/*.json in name order, each overriding
// the keys it sets. No file at all means the defaults.

#include <string>

#include "common/result.hpp"
#include "manager/tasks/config.hpp"

namespace taskscope::manager {

/// Loads `path` and `path + ".d"`; a missing file is fine, a bad one is an
/// InvalidConfig error naming the file and the key.
common::Result<Config> loadConfig(const std::string& path, Config defaults = {});

}  // namespace taskscope::manager
