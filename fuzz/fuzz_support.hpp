#pragma once
// What the fuzz targets share: the input as text, and the check that
// stands for a daemon going down. A target calls check() for each property
// it proves; a failure aborts, which libFuzzer reports as a crash with the
// input saved, and which fails the replay test in the unit tier.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace taskscope::fuzz {

inline std::string_view text(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

/// Aborts with `what` unless `ok`: the property the target proves broke.
inline void check(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "fuzz check failed: %s\n", what);
    std::abort();
}

}  // namespace taskscope::fuzz
