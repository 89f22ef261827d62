#pragma once
// JSON text from outside (a caller's spec over the bus, a record read back
// from disk, a plugin's output) parsed with two bounds every reader needs:
// an error that says where the text went wrong, and a limit on nesting.

#include <string>
#include <string_view>

#include "common/result.hpp"
#include "spec/json.hpp"

namespace taskscope::spec {

/// The deepest nesting of arrays and objects a reader takes. nlohmann's
/// parser keeps its own stack, but copying, comparing and dumping a value
/// recurse once per level: a spec nested 200000 deep (400 KB, well inside
/// a bus message) overflowed the manager's stack (issue 58). Specs, Nomad
/// configs and CNI conflists nest below 10.
inline constexpr int kMaxJsonDepth = 64;

/// The text as JSON, or InvalidSpec naming the byte (its offset, from 0)
/// where it went wrong:
/// "<what> is not valid JSON at byte N: ...", "<what> nests deeper than
/// 64 at byte N". Callers whose errors have another name rename it.
common::Result<Json> parseJson(std::string_view text, const std::string& what);

}  // namespace taskscope::spec
