// A walk over a MessagePack value's headers (msgpack_claims.hpp), by the
// format's spec (github.com/msgpack/msgpack/blob/master/spec.md): each
// header says how many bytes follow it or how many elements.
#include "nomad/msgpack_claims.hpp"

#include <cstdint>
#include <vector>

namespace taskscope::nomad {

namespace {

uint64_t bigEndian(std::string_view b, size_t at, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = v << 8 | static_cast<unsigned char>(b[at + i]);
    return v;
}

// One header: its own size, the payload bytes it skips, and the elements
// it opens (a map's pairs count twice).
struct Header {
    size_t size = 1;
    uint64_t skip = 0;
    uint64_t elements = 0;
    bool container = false;
    bool valid = true;
};

Header header(std::string_view b, size_t at) {
    const auto c = static_cast<unsigned char>(b[at]);
    Header h;
    const auto sized = [&](size_t lenBytes, bool container, uint64_t per) {
        h.size = 1 + lenBytes;
        if (b.size() - at < h.size) {
            h.valid = false;
            return;
        }
        const uint64_t n = bigEndian(b, at + 1, lenBytes);
        if (container) {
            h.container = true;
            h.elements = n * per;
        } else {
            h.skip = n;
        }
    };
    if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3) return h;  // fixints, nil, bools
    if (c >= 0x80 && c <= 0x8f) return h.container = true, h.elements = (c & 0x0fu) * 2u, h;
    if (c >= 0x90 && c <= 0x9f) return h.container = true, h.elements = c & 0x0fu, h;
    if (c >= 0xa0 && c <= 0xbf) return h.skip = c & 0x1fu, h;
    switch (c) {
        case 0xc4: case 0xd9: sized(1, false, 0); break;  // bin8, str8
        case 0xc5: case 0xda: sized(2, false, 0); break;  // bin16, str16
        case 0xc6: case 0xdb: sized(4, false, 0); break;  // bin32, str32
        case 0xc7: sized(1, false, 0), h.skip += 1; break;  // ext8: length, type, data
        case 0xc8: sized(2, false, 0), h.skip += 1; break;
        case 0xc9: sized(4, false, 0), h.skip += 1; break;
        case 0xca: case 0xce: case 0xd2: h.skip = 4; break;  // float32, uint32, int32
        case 0xcb: case 0xcf: case 0xd3: h.skip = 8; break;
        case 0xcc: case 0xd0: h.skip = 1; break;
        case 0xcd: case 0xd1: h.skip = 2; break;
        case 0xd4: h.skip = 2; break;  // fixext 1, 2, 4, 8, 16: type and data
        case 0xd5: h.skip = 3; break;
        case 0xd6: h.skip = 5; break;
        case 0xd7: h.skip = 9; break;
        case 0xd8: h.skip = 17; break;
        case 0xdc: sized(2, true, 1); break;  // array16, array32
        case 0xdd: sized(4, true, 1); break;
        case 0xde: sized(2, true, 2); break;  // map16, map32
        case 0xdf: sized(4, true, 2); break;
        default: h.valid = false;  // 0xc1, never used
    }
    return h;
}

}  // namespace

std::optional<std::string> msgpackClaimsTooMuch(std::string_view b, size_t maxDepth) {
    // The elements each open container still owes, innermost last; their
    // sum is `owed`. The value itself is the one element owed at the start.
    std::vector<uint64_t> open{1};
    uint64_t owed = 1;
    size_t at = 0;
    const auto where = [&] { return " at byte " + std::to_string(at); };
    while (!open.empty()) {
        if (open.back() == 0) {
            open.pop_back();
            continue;
        }
        if (at >= b.size()) return "the value ends early" + where();
        const Header h = header(b, at);
        if (!h.valid) return "no MessagePack header" + where();
        --open.back();
        --owed;
        // After this header and its payload, a byte at least for every
        // element still owed, this container's included.
        const uint64_t left = b.size() - at - h.size;
        if (h.skip > left || left - h.skip < owed + h.elements)
            return (h.container ? "a count of " + std::to_string(h.elements) + " elements"
                                : "a length of " + std::to_string(h.skip) + " bytes") +
                   where() + ", with " + std::to_string(left) + " bytes left";
        if (h.container) {
            if (open.size() > maxDepth) return "nesting deeper than " + std::to_string(maxDepth) + where();
            open.push_back(h.elements);
            owed += h.elements;
        }
        at += h.size + static_cast<size_t>(h.skip);
    }
    if (at != b.size()) return "trailing bytes after the value" + std::string(" at byte ") + std::to_string(at);
    return std::nullopt;
}

}  // namespace taskscope::nomad
