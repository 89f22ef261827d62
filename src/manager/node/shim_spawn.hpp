#pragma once
// The one way the manager starts a process of taskscope-shim: a task's
// shim (launch/launcher.hpp) and the placeholder that holds the shims' home
// (shim_home.hpp) alike.

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "common/result.hpp"

namespace taskscope::manager {

/// posix_spawn of taskscope-shim (or its placeholder) with stdin on
/// /dev/null, `dup2s` (from, to) applied, default signal handling and an
/// empty signal mask, whatever the manager blocked for its signalfd.
common::Result<pid_t> spawnShimProcess(const std::string& path, char* const argv[], char* const envp[],
                                       const std::vector<std::pair<int, int>>& dup2s = {});

}  // namespace taskscope::manager
