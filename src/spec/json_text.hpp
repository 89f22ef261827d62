#pragma once
// JSON text from outside (a caller's spec over the bus, a record read back
// from disk, a plugin's output) parsed with two bounds every reader needs:
// an error that says where the text went wrong, and a limit on nesting.

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
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

/// `v` as a T when it is a whole number that fits one; nullopt for a
/// float, a string, a number past T's range. nlohmann's get<T>() narrows
/// another width silently, and a float past T's range is undefined
/// behaviour (fuzz/task_record found one).
template <class T>
std::optional<T> wholeNumber(const Json& v) {
    using Limits = std::numeric_limits<T>;
    if (v.is_number_unsigned()) {
        if (const auto n = v.get<uint64_t>(); n <= static_cast<uint64_t>(Limits::max())) return static_cast<T>(n);
    } else if (v.is_number_integer()) {
        const auto n = v.get<int64_t>();
        if (n < 0 ? n >= static_cast<int64_t>(Limits::min())
                  : static_cast<uint64_t>(n) <= static_cast<uint64_t>(Limits::max()))
            return static_cast<T>(n);
    }
    return std::nullopt;
}

/// For readers that walk an object inside a try block, as they do with
/// nlohmann's at(): j[key] as a whole T, else std::invalid_argument
/// naming the key. numberOr: `otherwise` when the key is absent.
template <class T>
T numberAt(const Json& j, const char* key) {
    if (auto n = wholeNumber<T>(j.at(key))) return *n;
    throw std::invalid_argument(std::string(key) + " must be a whole number that fits, not " + j.at(key).dump());
}
template <class T>
T numberOr(const Json& j, const char* key, T otherwise) {
    return j.contains(key) ? numberAt<T>(j, key) : otherwise;
}

}  // namespace taskscope::spec
