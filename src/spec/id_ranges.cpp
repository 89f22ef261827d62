#include "spec/id_ranges.hpp"

#include <charconv>

#include "spec/json.hpp"

namespace taskscope::spec {

namespace {

// A bound as Nomad's validateBounds reads it (strconv.ParseUint(s, 10,
// 32)): decimal digits only, no sign, no space, at most 2^32-1.
bool parseBound(const std::string& s, uint32_t& out) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
    const auto* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, out);
    return ec == std::errc() && p == end;
}

}  // namespace

common::Result<IdRanges> IdRanges::parse(const std::string& text, const std::string& what) {
    IdRanges out;
    if (text.empty()) return out;
    size_t start = 0;
    while (start <= text.size()) {
        auto comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        const auto piece = text.substr(start, comma - start);
        const auto dash = piece.find('-');
        uint32_t low = 0, high = 0;
        const bool parsed = dash == std::string::npos
                                ? parseBound(piece, low) && parseBound(piece, high)
                                : parseBound(piece.substr(0, dash), low) && parseBound(piece.substr(dash + 1), high);
        if (!parsed)
            return invalid(what + ": \"" + piece + "\" in \"" + text +
                           "\" is not an ID or a LOW-HIGH range of IDs (0..4294967295)");
        if (low > high)
            return invalid(what + ": range \"" + piece + "\" in \"" + text + "\" has its lower bound above its upper one");
        out.spans_.emplace_back(low, high);
        start = comma + 1;
    }
    return out;
}

bool IdRanges::contains(uint32_t id) const {
    for (const auto& [low, high] : spans_)
        if (id >= low && id <= high) return true;
    return false;
}

std::string IdRanges::text() const {
    std::string out;
    for (const auto& [low, high] : spans_) {
        if (!out.empty()) out += ',';
        out += std::to_string(low);
        if (high != low) out += "-" + std::to_string(high);
    }
    return out;
}

}  // namespace taskscope::spec
