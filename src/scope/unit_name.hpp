#pragma once
// Unit names and D-Bus object paths for tasks.

#include <string>
#include <string_view>

#include "common/result.hpp"

namespace taskscope::scope {

/// Longest unit name systemd accepts (UNIT_NAME_MAX minus the NUL).
inline constexpr size_t kUnitNameMax = 255;

/// Escapes one component the way systemd escapes unit names (\xNN for
/// anything outside [A-Za-z0-9:_.], a leading '.', '\\' and '/'), except
/// that '-' is kept: a dash only means hierarchy in slice names, and Nomad
/// and Docker name task scopes <uuid>-<task>.scope with the UUID's dashes
/// intact, so operators find the same names they know.
std::string escapeComponent(std::string_view text);

/// "<alloc>-<task>.scope", or InvalidName when a part is empty, holds a
/// control character, or the result does not fit a unit name.
common::Result<std::string> taskScopeName(std::string_view allocId, std::string_view task);

/// True for a valid slice unit name ("nomad.slice", "a-b.slice").
bool isValidSliceName(std::string_view name);

/// The D-Bus object path of a task's object below `prefix`, built from its
/// unit name with sd-bus's label escaping (so it is reversible).
std::string taskObjectPath(const std::string& prefix, const std::string& unit);

}  // namespace taskscope::scope
