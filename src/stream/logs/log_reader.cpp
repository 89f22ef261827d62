#include "stream/logs/log_reader.hpp"

#include "common/error_names.hpp"

namespace taskscope::stream::logs {

common::Result<Origin> parseOrigin(const std::string& s) {
    if (s == "start") return Origin::Start;
    if (s == "end") return Origin::End;
    return common::makeError(common::errors::kInvalidArgument, "origin must be \"start\" or \"end\", not \"" + s + "\"");
}

common::Result<LogPosition> locate(const std::vector<LogFile>& files, Origin origin, int64_t offset,
                                   const std::string& what) {
    if (offset < 0)
        return common::makeError(common::errors::kInvalidArgument, "offset must not be negative (got " + std::to_string(offset) + ")");
    if (files.empty()) {
        if (origin == Origin::Start && offset > 0)
            return common::makeError(common::errors::kInvalidArgument,
                                     "offset " + std::to_string(offset) + " is past the end of " + what + " (0 bytes)");
        return LogPosition{};
    }
    uint64_t total = 0;
    for (const auto& f : files) total += f.size;
    const auto off = static_cast<uint64_t>(offset);
    uint64_t pos = 0;
    if (origin == Origin::Start) {
        if (off > total)
            return common::makeError(common::errors::kInvalidArgument, "offset " + std::to_string(off) + " is past the end of " +
                                                            what + " (" + std::to_string(total) + " bytes)");
        pos = off;
    } else {
        pos = off >= total ? 0 : total - off;
    }
    // The first file whose range holds pos; the end of the log is the end
    // of the last file.
    for (const auto& f : files) {
        if (pos < f.size) return LogPosition{f.index, pos};
        pos -= f.size;
    }
    return LogPosition{files.back().index, files.back().size};
}

bool nextFile(const std::vector<LogFile>& files, uint64_t index, uint64_t& next) {
    for (const auto& f : files)
        if (f.index > index) {
            next = f.index;
            return true;
        }
    return false;
}

}  // namespace taskscope::stream::logs
