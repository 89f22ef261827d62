// go-cty's MessagePack decoded into JSON values (cty_msgpack.hpp).
#include "nomad/cty_msgpack.hpp"

#define MSGPACK_NO_BOOST 1
#include <msgpack.hpp>

#include <cmath>
#include <limits>

#include "nomad/hcl_block.hpp"

namespace taskscope::nomad {

namespace {

using common::Result;
using hclblock::invalid;
using nlohmann::json;

constexpr int kMaxDepth = 64;  // the config is the caller's: bound the recursion

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
        return json(std::string(o.via.str.ptr, o.via.str.size));
    case msgpack::type::BIN:
        return json(std::string(o.via.bin.ptr, o.via.bin.size));
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
        msgpack::object_handle h = msgpack::unpack(bytes.data(), bytes.size(), offset);
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
