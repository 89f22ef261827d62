#pragma once
// Is this cgroup really the task's own scope? A kill, freeze or signal of a
// task reaches only the task's `<alloc>-<task>.scope` under the configured
// slice (issue 32). The cgroup a task record holds was read from
// /proc/<pid>/cgroup; under an unexpected layout that file says "/" or
// names something else (a manager under systemd in a container with v1
// hierarchies mounted beside cgroup2 read a task's cgroup as "/", and its
// forced kill wrote cgroup.kill at the container's root, killing every
// service in it). Such a path is refused, never written to: the caller
// asks systemd, which knows the unit's cgroup, instead.

#include <string>
#include <string_view>

#include "common/result.hpp"
#include "scope/cgroup_path.hpp"

namespace taskscope::scope {

/// `cgroup` if it is the scope `unit` itself below `slice` (the slice a
/// component somewhere above it, "-.slice" meaning the root): an absolute
/// path, no empty, "." or ".." component, ending in the unit. Anything
/// else, "" and "/" included, is InvalidArgument, naming the path.
common::Result<CgroupPath> checkTaskScope(std::string_view cgroup, std::string_view slice, std::string_view unit);

/// `root` (a hierarchy's mount) + the checked scope + "/" + `file`.
common::Result<std::string> taskScopeFile(std::string_view root, std::string_view cgroup, std::string_view slice,
                                          std::string_view unit, std::string_view file);

/// Whether a /proc/<pid>/cgroup text puts the process in the scope or in a
/// cgroup below it (a delegated scope may have children), on any line.
bool inTaskScope(std::string_view procCgroup, std::string_view slice, std::string_view unit);

}  // namespace taskscope::scope
