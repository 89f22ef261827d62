#pragma once
// Reads a stream's rotated log files back, oldest first, as one string.

#include <string>

#include "stream/logs/rotator.hpp"
#include "support/temp_dir.hpp"

namespace taskscope::stream::logs {

inline std::string readAll(const std::string& dir, const std::string& base) {
    std::string out;
    for (const auto& f : listLogFiles(dir, base)) out += test::slurp(logFilePath(dir, base, f.index));
    return out;
}

}  // namespace taskscope::stream::logs
