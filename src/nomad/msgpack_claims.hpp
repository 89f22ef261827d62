#pragma once
// The counts a MessagePack value claims, checked against its bytes before
// msgpack-c reads it. msgpack-c allocates an array's or a map's elements
// from its header's count before it reads any of them, and each container
// of a nested value may claim its own count: with only per-container
// limits, 64 levels of arrays each claiming the input's size asked for
// 64 x size x 24 bytes (a 4 MiB config, gRPC's default message limit,
// for 6 GiB). Every element takes one byte at least, so at any point the
// elements still owed by the open containers cannot outnumber the bytes
// left; a value that claims more is refused, naming the byte offset,
// and what msgpack-c then allocates stays within 24 bytes per input byte.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace taskscope::nomad {

/// Why `bytes` (one MessagePack value and nothing after it) cannot be
/// honest, or nullopt when every count it claims fits the bytes it has.
/// Nesting deeper than maxDepth is refused too; the walk keeps no stack.
std::optional<std::string> msgpackClaimsTooMuch(std::string_view bytes, size_t maxDepth);

}  // namespace taskscope::nomad
