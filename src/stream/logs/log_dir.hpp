#pragma once
// An allocation's log directory (<state>/logs/<alloc>/, the manager names
// it in each spool description): flat, only the rotated files of its tasks.

#include <cstddef>
#include <optional>
#include <string>

#include "common/result.hpp"

namespace taskscope::stream::logs {

/// Deletes every file in `dir` (not below it: the directory is flat, and a
/// subdirectory is not ours) and then `dir`; returns how many files went.
/// A directory that is not there is success with nothing (an allocation
/// whose tasks' output all went to Nomad's paths never had one). Fails
/// (with the files removed so far gone) when `dir` is a symlink or holds a
/// directory.
common::Result<std::optional<size_t>> removeLogDir(const std::string& dir);

}  // namespace taskscope::stream::logs
