#pragma once
// Decodes the MessagePack Nomad sends for a plugin's config and a task's
// config block: go-cty's encoding of a value typed by the plugin's own
// hclspec. Objects and maps are msgpack maps, lists/sets/tuples arrays,
// numbers an int, a float or (when neither holds them exactly) a decimal
// string, unknown values an extension (read as null), and a value of the
// dynamic pseudo-type a 2-array [type as JSON bytes, value]. Pure.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string_view>

#include "common/result.hpp"

namespace taskscope::nomad {

/// The value as JSON (dynamic values unwrapped to their value).
/// InvalidConfig when the bytes are not one complete msgpack value.
common::Result<nlohmann::json> decodeCty(std::string_view bytes);

/// A cty number as an integer, whichever way it was encoded (int, an
/// integral float, a decimal string). InvalidConfig otherwise.
common::Result<int64_t> ctyInteger(const nlohmann::json& value, const char* what);

}  // namespace taskscope::nomad
