// The nested slice layout's names (slice_layout.hpp).
#include "scope/slice_layout.hpp"

#include <cstdint>
#include <cstdio>

#include "scope/unit_name.hpp"

namespace taskscope::scope {

namespace {

constexpr std::string_view kSliceSuffix = ".slice";
constexpr std::string_view kShare = "share";
constexpr std::string_view kReserve = "reserve";
/// Longest overflow suffix an allocation slice name must leave room for ("-o" and 5 digits).
constexpr size_t kOverflowRoom = 7;

std::string stemOf(std::string_view slice) {
    if (slice.size() > kSliceSuffix.size() && slice.substr(slice.size() - kSliceSuffix.size()) == kSliceSuffix)
        slice.remove_suffix(kSliceSuffix.size());
    return std::string(slice);
}

bool plainInSlice(char c, bool first) {
    if (first && c == '.') return false;
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' || c == '_' ||
           c == '.';
}

int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::optional<unsigned> parseHexBucket(std::string_view text) {
    if (text.size() != 3 || text[0] != 'b') return std::nullopt;
    const int hi = hexValue(text[1]), lo = hexValue(text[2]);
    if (hi < 0 || lo < 0 || (text[1] >= 'A' && text[1] <= 'F') || (text[2] >= 'A' && text[2] <= 'F'))
        return std::nullopt;
    return unsigned(hi * 16 + lo);
}

}  // namespace

std::string escapeSliceComponent(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (plainInSlice(c, i == 0)) {
            out += c;
            continue;
        }
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
        out += buf;
    }
    return out;
}

std::optional<std::string> unescapeSliceComponent(std::string_view text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '-') return std::nullopt;  // a level, never part of a component
        if (c != '\\') {
            out += c;
            continue;
        }
        if (i + 3 >= text.size() || text[i + 1] != 'x') return std::nullopt;
        const int hi = hexValue(text[i + 2]), lo = hexValue(text[i + 3]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        i += 3;
    }
    // Only what escapeSliceComponent makes: the same text must come back.
    if (escapeSliceComponent(out) != text) return std::nullopt;
    return out;
}

std::string poolSlice(const SliceLayout& layout, Pool pool) {
    return stemOf(layout.root) + "-" + std::string(pool == Pool::Shared ? kShare : kReserve) + ".slice";
}

unsigned bucketOf(std::string_view allocId, unsigned fanOut) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bit
    for (unsigned char c : allocId) h = (h ^ c) * 1099511628211ull;
    return fanOut ? unsigned(h % fanOut) : 0;
}

std::string bucketSlice(const SliceLayout& layout, unsigned bucket) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "b%02x", bucket & 0xffu);
    return stemOf(poolSlice(layout, Pool::Shared)) + "-" + buf + ".slice";
}

common::Result<std::string> allocationSlice(const SliceLayout& layout, std::string_view allocId, Pool pool) {
    if (allocId.empty()) return common::makeError("InvalidName", "alloc_id must not be empty");
    const std::string parent = pool == Pool::Shared ? bucketSlice(layout, bucketOf(allocId, layout.fanOut))
                                                    : poolSlice(layout, Pool::Reserved);
    std::string name = stemOf(parent) + "-" + escapeSliceComponent(allocId) + ".slice";
    if (name.size() + kOverflowRoom > kUnitNameMax)
        return common::makeError("InvalidName", "the slice of alloc_id '" + std::string(allocId) + "' would be " +
                                                    std::to_string(name.size()) + " characters; a slice name takes " +
                                                    std::to_string(kUnitNameMax - kOverflowRoom) +
                                                    " here (systemd's " + std::to_string(kUnitNameMax) +
                                                    ", less room for an overflow slice)");
    return name;
}

std::string overflowSlice(std::string_view allocationSlice, unsigned n) {
    return stemOf(allocationSlice) + "-o" + std::to_string(n) + ".slice";
}

common::Result<TaskSlices> taskSlices(const SliceLayout& layout, std::string_view allocId, Pool pool,
                                      unsigned overflow) {
    auto alloc = allocationSlice(layout, allocId, pool);
    if (!alloc) return alloc.error();
    TaskSlices out;
    out.chain.push_back(poolSlice(layout, pool));
    if (pool == Pool::Shared) out.chain.push_back(bucketSlice(layout, bucketOf(allocId, layout.fanOut)));
    out.chain.push_back(*alloc);
    if (overflow) out.chain.push_back(overflowSlice(*alloc, overflow));
    out.allocation = *alloc;
    return out;
}

std::optional<AllocationSliceName> parseAllocationSlice(const SliceLayout& layout, std::string_view slice) {
    if (slice.size() <= kSliceSuffix.size() || slice.substr(slice.size() - kSliceSuffix.size()) != kSliceSuffix)
        return std::nullopt;
    std::string_view rest = slice.substr(0, slice.size() - kSliceSuffix.size());
    AllocationSliceName out;
    const std::string share = stemOf(poolSlice(layout, Pool::Shared)) + "-";
    const std::string reserve = stemOf(poolSlice(layout, Pool::Reserved)) + "-";
    if (rest.substr(0, share.size()) == share) {
        rest.remove_prefix(share.size());
        const size_t dash = rest.find('-');
        if (dash == std::string_view::npos) return std::nullopt;
        const auto bucket = parseHexBucket(rest.substr(0, dash));
        if (!bucket) return std::nullopt;
        rest.remove_prefix(dash + 1);
        out.pool = Pool::Shared;
    } else if (rest.substr(0, reserve.size()) == reserve) {
        rest.remove_prefix(reserve.size());
        out.pool = Pool::Reserved;
    } else {
        return std::nullopt;
    }
    const size_t dash = rest.find('-');
    if (dash != std::string_view::npos) {
        const auto suffix = rest.substr(dash + 1);
        if (suffix.size() < 2 || suffix[0] != 'o' || suffix[1] == '0') return std::nullopt;
        unsigned n = 0;
        for (char c : suffix.substr(1)) {
            if (c < '0' || c > '9' || n > 99999) return std::nullopt;
            n = n * 10 + unsigned(c - '0');
        }
        out.overflow = n;
        rest = rest.substr(0, dash);
    }
    auto id = unescapeSliceComponent(rest);
    if (!id || id->empty()) return std::nullopt;
    out.allocId = std::move(*id);
    // A bucket that is not the id's is not a slice this layout made.
    if (out.pool == Pool::Shared) {
        auto expected = allocationSlice(layout, out.allocId, Pool::Shared);
        if (!expected) return std::nullopt;
        const std::string name(slice);
        if (name != *expected && name != overflowSlice(*expected, out.overflow)) return std::nullopt;
    }
    return out;
}

std::vector<std::string> sliceAncestors(std::string_view slice) {
    std::vector<std::string> out;
    const std::string stem = stemOf(slice);
    if (stem == "-" || stem.empty()) return out;
    for (size_t dash = stem.find('-'); dash != std::string::npos; dash = stem.find('-', dash + 1))
        out.push_back(stem.substr(0, dash) + ".slice");
    return out;
}

}  // namespace taskscope::scope
