// go-cty's MessagePack decoded into JSON values (cty_msgpack.hpp).
#include "nomad/cty_msgpack.hpp"

#define MSGPACK_NO_BOOST 1
#include <msgpack.hpp>

#include <cmath>
#include <limits>

#include "nomad/hcl_block.hpp"
#include "nomad/msgpack_claims.hpp"

namespace taskscope::nomad {

namespace {

using common::Result;
using hclblock::invalid;
using nlohmann::json;

constexpr int kMaxDepth = 64;  // the config is the caller's: bound the recursion

// RFC 3629's table: a lead byte's range, how many bytes follow it, and
// the range of the first of those (the others are 80..BF).
struct Utf8Lead {
    unsigned char from, to;
    size_t follow;
    unsigned char lo, hi;
};
constexpr Utf8Lead kUtf8Leads[] = {
    {0x00, 0x7F, 0, 0, 0},       {0xC2, 0xDF, 1, 0x80, 0xBF}, {0xE0, 0xE0, 2, 0xA0, 0xBF},
    {0xE1, 0xEC, 2, 0x80, 0xBF}, {0xED, 0xED, 2, 0x80, 0x9F}, {0xEE, 0xEF, 2, 0x80, 0xBF},
    {0xF0, 0xF0, 3, 0x90, 0xBF}, {0xF1, 0xF3, 3, 0x80, 0xBF}, {0xF4, 0xF4, 3, 0x80, 0x8F},
};

// Whether `s` is UTF-8 as RFC 3629 has it (no overlong forms, no
// surrogates, nothing past U+10FFFF): what nlohmann's dump() accepts. A
// cty string always is; msgpack's str is any bytes, and a value that
// dump() refuses threw out of the driver wherever it was printed (an
// error message, the spec sent to the manager: issue 58's fuzzing).
bool isUtf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const Utf8Lead* lead = nullptr;
        for (const auto& l : kUtf8Leads)
            if (c >= l.from && c <= l.to) lead = &l;
        if (!lead || s.size() - i - 1 < lead->follow) return false;
        for (size_t k = 1; k <= lead->follow; ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            if (b < (k == 1 ? lead->lo : 0x80) || b > (k == 1 ? lead->hi : 0xBF)) return false;
        }
        i += 1 + lead->follow;
    }
    return true;
}

Result<json> utf8Text(const char* ptr, uint32_t size) {
    const std::string_view s(ptr, size);
    if (!isUtf8(s)) return invalid("config has a string that is not UTF-8");
    return json(std::string(s));
}

Result<json> toJson(const msgpack::object& o, int depth) {
    if (depth > kMaxDepth) return invalid("config nests deeper than " + std::to_string(kMaxDepth));
    switch (o.type) {
    case msgpack::type::NIL:
        return json(nullptr);
    case msgpack::type::BOOLEAN:
        return json(o.via.boolean);
    case msgpack::type::POSITIVE_INTEGER:
        return json(o.via.u64);
    case msgpack::type::NEGATIVE_INTEGER:
        return json(o.via.i64);
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
        return json(o.via.f64);
    case msgpack::type::STR:
        return utf8Text(o.via.str.ptr, o.via.str.size);
    case msgpack::type::BIN:
        return utf8Text(o.via.bin.ptr, o.via.bin.size);
    case msgpack::type::EXT:
        return json(nullptr);  // cty's unknown value: not known yet, so absent
    case msgpack::type::ARRAY: {
        const auto& a = o.via.array;
        // A dynamic value: [type JSON as bin, value]. A cty string is
        // always str, never bin, so a leading bin cannot be a list item.
        if (a.size == 2 && a.ptr[0].type == msgpack::type::BIN) return toJson(a.ptr[1], depth + 1);
        json out = json::array();
        for (uint32_t i = 0; i < a.size; ++i) {
            auto v = toJson(a.ptr[i], depth + 1);
            if (!v) return v;
            out.push_back(std::move(*v));
        }
        return out;
    }
    case msgpack::type::MAP: {
        json out = json::object();
        const auto& m = o.via.map;
        for (uint32_t i = 0; i < m.size; ++i) {
            const auto& k = m.ptr[i].key;
            if (k.type != msgpack::type::STR) return invalid("a map key is not a string");
            if (!isUtf8({k.via.str.ptr, k.via.str.size})) return invalid("config has a key that is not UTF-8");
            auto v = toJson(m.ptr[i].val, depth + 1);
            if (!v) return v;
            out[std::string(k.via.str.ptr, k.via.str.size)] = std::move(*v);
        }
        return out;
    }
    }
    return invalid("unknown msgpack type");
}

}  // namespace

Result<json> decodeCty(std::string_view bytes) {
    if (bytes.empty()) return json::object();  // no config block at all
    try {
        std::size_t offset = 0;
        // msgpack-c allocates an array's or a map's elements from its
        // header's count before it reads them: a 13-byte config claiming
        // 4 billion entries asked for 256 GB (issue 58's fuzzing). The
        // claims of the whole value are checked against its bytes first
        // (msgpack_claims.hpp); msgpack-c's own limits stay as a second
        // fence, the nesting bounded as toJson bounds it.
        if (auto why = msgpackClaimsTooMuch(bytes, kMaxDepth)) return invalid("config is not valid msgpack: " + *why);
        const msgpack::unpack_limit limit(bytes.size(), bytes.size() / 2, bytes.size(), bytes.size(), bytes.size(),
                                          kMaxDepth);
        msgpack::object_handle h = msgpack::unpack(bytes.data(), bytes.size(), offset, nullptr, nullptr, limit);
        if (offset != bytes.size()) return invalid("trailing bytes after the config value");
        return toJson(h.get(), 0);
    } catch (const std::exception& e) {
        return invalid(std::string("config is not valid msgpack: ") + e.what());
    }
}

Result<int64_t> ctyInteger(const json& v, const char* what) {
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::trunc(d) == d && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
    }
    if (v.is_string()) {
        const auto s = v.get<std::string>();
        std::size_t used = 0;
        try {
            const long long n = std::stoll(s, &used);
            if (used == s.size()) return static_cast<int64_t>(n);
        } catch (const std::exception&) {
        }
    }
    return invalid(std::string(what) + " must be a whole number, not " + v.dump());
}

}  // namespace taskscope::nomad
