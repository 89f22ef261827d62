#pragma once
// A JSON object described once, as a table of fields: each field names its
// key, the member it fills and the codec that checks and converts the value
// both ways. Reading and writing a struct, and every message about a bad
// value, come from that one table (no chain of `key == "..."` branches).
//
//   const Schema<Volume> kVolume{{
//       field("source", &Volume::source, cleanPath(), Presence::Always),
//       field("read_only", &Volume::readOnly, boolean(), Presence::Always),
//   }, {rule}};
//
// Errors are InvalidSpec (or the name a schema is read with) and say the
// field's full name ("isolation.volumes[0].target must be ...").

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "spec/json.hpp"

namespace taskscope::spec {

/// When a field is written: always, or only when it differs from the
/// default-constructed struct's (an optional: when it is set).
enum class Presence { Always, UnlessDefault };

/// How a value of type T is read from JSON (checked) and written back.
template <class T>
struct Codec {
    /// `at`: the field's full name, for messages.
    std::function<common::Result<T>(const Json& value, const std::string& at, Strictness how)> read;
    std::function<Json(const T& value)> write;
};

template <class S>
struct Field {
    std::string name;
    std::function<common::Result<void>(const Json& value, S& out, const std::string& at, Strictness how)> read;
    /// Adds the field to `object` (or leaves it out).
    std::function<void(const S& in, Json& object)> write;
    bool required = false;
};

/// A rule between fields, checked once they are all read. `prefix` is the
/// object's own name with a dot ("resources.") or "".
template <class S>
using Rule = std::function<common::Result<void>(const S& value, const std::string& prefix)>;

template <class S>
struct Schema {
    std::vector<Field<S>> fields;
    /// Checks of a caller's object (Strict only: what another daemon wrote
    /// was checked when it was accepted).
    std::vector<Rule<S>> checks;
    /// Run on a fresh struct before any field is read (a default that
    /// depends on the object being there at all).
    std::function<void(S&)> init;
    /// Run once every field is read, however strictly: a value that
    /// follows from others.
    std::function<void(S&)> derive;
};

// --- codecs ---------------------------------------------------------------

Codec<std::string> text();
/// A string `check` accepts (it returns the message's end: "must be ...").
Codec<std::string> text(std::function<std::optional<std::string>(const std::string&)> check);
Codec<bool> boolean();
/// An integer in [min, max]: "X is V, outside MIN..MAX".
Codec<int64_t> integer(int64_t min, int64_t max);
/// An integer codec for another integer type.
template <class T>
Codec<T> integerAs(int64_t min, int64_t max) {
    auto base = integer(min, max);
    return {[base](const Json& v, const std::string& at, Strictness how) -> common::Result<T> {
                auto n = base.read(v, at, how);
                if (!n) return n.error();
                return static_cast<T>(*n);
            },
            [](const T& v) { return Json(v); }};
}
/// An array of strings.
Codec<std::vector<std::string>> texts();
/// One of `words`, each meaning a value.
template <class T>
Codec<T> oneOf(std::vector<std::pair<std::string, T>> words) {
    return {[words](const Json& v, const std::string& at, Strictness) -> common::Result<T> {
                if (v.is_string())
                    for (const auto& [w, value] : words)
                        if (v.get<std::string>() == w) return value;
                std::string list;
                for (size_t i = 0; i < words.size(); ++i)
                    list += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + ("\"" + words[i].first + "\"");
                return invalid(at + " must be " + list);
            },
            [words](const T& value) {
                for (const auto& [w, v] : words)
                    if (v == value) return Json(w);
                return Json(words.front().first);
            }};
}
/// A nested object read with its own schema.
template <class T>
Codec<T> object(const Schema<T>& schema);
/// An array of objects, at most `max`.
template <class T>
Codec<std::vector<T>> objects(const Schema<T>& schema, size_t max);

// --- fields ---------------------------------------------------------------

template <class S, class T>
Field<S> field(std::string name, T S::*member, Codec<T> codec, Presence when = Presence::UnlessDefault,
               bool required = false) {
    Field<S> f;
    f.name = name;
    f.required = required;
    f.read = [member, codec](const Json& v, S& out, const std::string& at, Strictness how) -> common::Result<void> {
        auto value = codec.read(v, at, how);
        if (!value) return value.error();
        out.*member = std::move(*value);
        return {};
    };
    f.write = [name, member, codec, when](const S& in, Json& object) {
        static const S kDefault{};
        if (when == Presence::UnlessDefault && in.*member == kDefault.*member) return;
        object[name] = codec.write(in.*member);
    };
    return f;
}

/// A member of a member (a section of a config), written unless default.
template <class S, class M, class T>
Field<S> field(std::string name, M S::*outer, T M::*inner, Codec<T> codec) {
    Field<S> f;
    f.name = name;
    f.read = [outer, inner, codec](const Json& v, S& out, const std::string& at,
                                   Strictness how) -> common::Result<void> {
        auto value = codec.read(v, at, how);
        if (!value) return value.error();
        (out.*outer).*inner = std::move(*value);
        return {};
    };
    f.write = [name, outer, inner, codec](const S& in, Json& object) {
        static const S kDefault{};
        if ((in.*outer).*inner == (kDefault.*outer).*inner) return;
        object[name] = codec.write((in.*outer).*inner);
    };
    return f;
}

/// An optional member: written when set.
template <class S, class T>
Field<S> field(std::string name, std::optional<T> S::*member, Codec<T> codec) {
    Field<S> f;
    f.name = name;
    f.read = [member, codec](const Json& v, S& out, const std::string& at, Strictness how) -> common::Result<void> {
        auto value = codec.read(v, at, how);
        if (!value) return value.error();
        out.*member = std::move(*value);
        return {};
    };
    f.write = [name, member, codec](const S& in, Json& object) {
        if (in.*member) object[name] = codec.write(*(in.*member));
    };
    return f;
}

// --- reading and writing --------------------------------------------------

/// Reads the fields `j` (an object) has into `out`, leaving the others as
/// they are (a drop-in over a config). `prefix` names the object for
/// messages ("resources." for resources' fields, "" at the top).
template <class S>
common::Result<void> applyObject(const Schema<S>& schema, const Json& j, S& out, const std::string& prefix,
                                 Strictness how = Strictness::Strict) {
    const std::string self = prefix.empty() ? std::string("spec") : prefix.substr(0, prefix.size() - 1);
    if (!j.is_object()) return invalid(self + " must be an object");
    for (const auto& [key, value] : j.items()) {
        const Field<S>* f = nullptr;
        for (const auto& candidate : schema.fields)
            if (candidate.name == key) f = &candidate;
        if (!f) {
            if (how == Strictness::Lenient) continue;
            return invalid("unknown field " + prefix + key);
        }
        if (auto r = f->read(value, out, prefix + key, how); !r) return r.error();
    }
    if (how == Strictness::Strict) {
        for (const auto& f : schema.fields)
            if (f.required && !j.contains(f.name)) return invalid(prefix + f.name + " is required");
        for (const auto& check : schema.checks)
            if (auto r = check(out, prefix); !r) return r.error();
    }
    if (schema.derive) schema.derive(out);
    return {};
}

/// Reads `j` (an object) into a fresh S.
template <class S>
common::Result<S> readObject(const Schema<S>& schema, const Json& j, const std::string& prefix,
                             Strictness how = Strictness::Strict) {
    S out{};
    if (schema.init) schema.init(out);
    if (auto r = applyObject(schema, j, out, prefix, how); !r) return r.error();
    return out;
}

template <class S>
Json writeObject(const Schema<S>& schema, const S& value) {
    Json out = Json::object();
    for (const auto& f : schema.fields) f.write(value, out);
    return out;
}

template <class T>
Codec<T> object(const Schema<T>& schema) {
    return {[&schema](const Json& v, const std::string& at, Strictness how) {
                return readObject(schema, v, at + ".", how);
            },
            [&schema](const T& value) { return writeObject(schema, value); }};
}

template <class T>
Codec<std::vector<T>> objects(const Schema<T>& schema, size_t max) {
    return {[&schema, max](const Json& v, const std::string& at, Strictness how) -> common::Result<std::vector<T>> {
                if (!v.is_array()) return invalid(at + " must be an array of objects");
                if (v.size() > max) return invalid(at + " has more than " + std::to_string(max) + " entries");
                std::vector<T> out;
                for (size_t i = 0; i < v.size(); ++i) {
                    auto one = readObject(schema, v[i], at + "[" + std::to_string(i) + "].", how);
                    if (!one) return one.error();
                    out.push_back(std::move(*one));
                }
                return out;
            },
            [&schema](const std::vector<T>& values) {
                Json out = Json::array();
                for (const auto& v : values) out.push_back(writeObject(schema, v));
                return out;
            }};
}

/// JSON text as an object, or InvalidSpec ("<what> is not valid JSON at
/// byte N: ...", "<what> nests deeper than 64 at byte N", "<what> must be
/// a JSON object"): spec/json_text.hpp's bounds.
common::Result<Json> parseObject(std::string_view text, const std::string& what);

}  // namespace taskscope::spec
