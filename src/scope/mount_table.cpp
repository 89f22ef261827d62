// The two mount-table formats parsed into one kind of entry (mount_table.hpp).
#include "scope/mount_table.hpp"

#include <charconv>

#include "common/error_names.hpp"
#include "common/files.hpp"

namespace taskscope::scope {

namespace {

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    size_t pos = 0;
    while (pos < line.size()) {
        const size_t start = line.find_first_not_of(" \t", pos);
        if (start == std::string_view::npos) break;
        size_t end = line.find_first_of(" \t", start);
        if (end == std::string_view::npos) end = line.size();
        out.push_back(line.substr(start, end - start));
        pos = end;
    }
    return out;
}

std::vector<std::string> commaList(std::string_view s) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t end = s.find(',', pos);
        if (end == std::string_view::npos) end = s.size();
        if (end > pos) out.emplace_back(s.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

/// Calls `entry(words, lineNumber)` for each non-blank line; stops at the
/// first error it returns, or passes over the line with `skipMalformed`.
template <class F>
common::Result<std::vector<MountEntry>> eachLine(std::string_view text, bool skipMalformed, F entry) {
    std::vector<MountEntry> out;
    size_t lineNo = 0, pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        const auto line = text.substr(pos, end - pos);
        pos = end + 1;
        ++lineNo;
        const auto w = words(line);
        if (w.empty()) continue;
        auto e = entry(w, lineNo, line);
        if (!e && skipMalformed) continue;
        if (!e) return e.error();
        out.push_back(std::move(*e));
    }
    return out;
}

common::Error malformed(const std::string& path, size_t lineNo, std::string_view line) {
    return common::makeError(common::errors::kInternal, path + ":" + std::to_string(lineNo) +
                                                            ": malformed mount entry '" + std::string(line) + "'");
}

bool holds(const std::string& mountPoint, const std::string& path) {
    if (mountPoint == "/") return true;
    return path.compare(0, mountPoint.size(), mountPoint) == 0 &&
           (path.size() == mountPoint.size() || path[mountPoint.size()] == '/');
}

}  // namespace

bool MountEntry::hasOption(std::string_view option) const {
    for (const auto& o : options)
        if (o == option) return true;
    return false;
}

bool MountEntry::shared() const {
    for (const auto& tag : optional)
        if (tag.rfind("shared:", 0) == 0) return true;
    return false;
}

std::string unescapeMountField(std::string_view field) {
    std::string out;
    out.reserve(field.size());
    for (size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size()) {
            const std::string_view oct = field.substr(i + 1, 3);
            unsigned value = 0;
            const auto [ptr, ec] = std::from_chars(oct.data(), oct.data() + oct.size(), value, 8);
            if (ec == std::errc() && ptr == oct.data() + oct.size() && value < 256) {
                out += static_cast<char>(value);
                i += 3;
                continue;
            }
        }
        out += field[i];
    }
    return out;
}

common::Result<std::vector<MountEntry>> parseMountInfo(std::string_view text, const std::string& path,
                                                       bool skipMalformed) {
    return eachLine(text, skipMalformed, [&](const std::vector<std::string_view>& w, size_t lineNo,
                              std::string_view line) -> common::Result<MountEntry> {
        // Six fixed fields, optional ones up to "-", then the filesystem's
        // type, source and options (the last two may be empty words).
        size_t dash = 6;
        while (dash < w.size() && w[dash] != "-") ++dash;
        if (w.size() < 6 || dash + 1 >= w.size()) return malformed(path, lineNo, line);
        MountEntry e;
        e.root = unescapeMountField(w[3]);
        e.mountPoint = unescapeMountField(w[4]);
        e.options = commaList(w[5]);
        for (size_t i = 6; i < dash; ++i) e.optional.emplace_back(w[i]);
        e.fsType = std::string(w[dash + 1]);
        if (dash + 2 < w.size()) e.source = unescapeMountField(w[dash + 2]);
        if (dash + 3 < w.size()) e.superOptions = commaList(w[dash + 3]);
        return e;
    });
}

common::Result<std::vector<MountEntry>> parseMounts(std::string_view text, const std::string& path) {
    return eachLine(text, false, [&](const std::vector<std::string_view>& w, size_t lineNo,
                              std::string_view line) -> common::Result<MountEntry> {
        if (w.size() < 4) return malformed(path, lineNo, line);
        MountEntry e;
        e.source = unescapeMountField(w[0]);
        e.mountPoint = unescapeMountField(w[1]);
        e.fsType = std::string(w[2]);
        e.options = commaList(w[3]);
        e.superOptions = e.options;
        return e;
    });
}

const MountEntry* holdingMount(const std::vector<MountEntry>& mounts, const std::string& path) {
    const MountEntry* best = nullptr;
    for (const auto& m : mounts) {
        if (!holds(m.mountPoint, path)) continue;
        if (best && m.mountPoint.size() < best->mountPoint.size()) continue;
        best = &m;
    }
    return best;
}

common::Result<std::string> readOwnMountInfo() { return common::readFile("/proc/self/mountinfo"); }

}  // namespace taskscope::scope
