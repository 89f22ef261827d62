#pragma once
// A config block Nomad decodes for the driver (the plugin block, a task's
// config block, the node's task-config keys) described once, as a table of
// keys. Each row names the key, its HCL type, whether it is required and
// its default (what the hclspec schema sent to Nomad says: plugin_facts.cpp
// builds it from the rows), and how the key's value is read into a typed
// struct, with spec/schema.hpp's codecs where one fits. The schema and the
// parser come from the same rows, so a key is listed once.
// Every bad value is InvalidConfig naming the key ("config.work_dir must
// be ..."), as Nomad's own drivers name the key they refuse. Pure.
//
//   struct Pool { bool shared = true; std::vector<std::string> hosts; };
//   const std::vector<hclblock::Key<Pool>> kPoolKeys = {
//       hclblock::defaulted("shared", "bool", &Pool::shared, spec::boolean()),  // literal "true"
//       hclblock::key("hosts", "list(string)", &Pool::hosts, spec::texts()),
//   };

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error_names.hpp"
#include "common/result.hpp"
#include "spec/schema.hpp"

namespace taskscope::nomad::hclblock {

/// InvalidConfig with `message`.
inline common::Error invalid(const std::string& message) {
    return common::makeError(common::errors::kInvalidConfig, message);
}

/// The same message as InvalidConfig: what spec/'s codecs and rules say
/// (InvalidSpec, for a task spec) is, in a config block, a bad config.
inline common::Error asConfigError(const common::Error& e) {
    return invalid(e.message);
}

/// How Nomad treats a key's absence.
enum class Need {
    Optional,   ///< left out: null, the struct keeps its default
    Required,   ///< the schema's `required`: Nomad refuses a block without it
    Defaulted,  ///< the schema carries the struct's default as a literal
};

/// One key of a block that fills an S.
template <class S>
struct Key {
    /// Reads a non-null value into `out`; `at` is its name for messages.
    using Reader = std::function<common::Result<void>(const nlohmann::json& value, S& out, const std::string& at)>;

    Key(const char* name_, const char* hclType_, Reader read_, Need need_ = Need::Optional,
        std::string defaultLiteral_ = {})
        : name(name_),
          hclType(hclType_),
          read(std::move(read_)),
          need(need_),
          defaultLiteral(std::move(defaultLiteral_)) {}

    const char* name;
    /// An HCL type expression, the hclspec Attr's `type` (Nomad parses it
    /// with hcl's typeexpr: helper/pluginutils/hclspecutils/dec.go
    /// decodeAttrSpec): "string", "bool", "number", "list(string)", ...
    const char* hclType;
    Reader read;
    Need need;
    /// For Need::Defaulted: an HCL expression (Nomad parses a Literal's
    /// value with hclsyntax.ParseExpression: hclspecutils/dec.go
    /// decodeLiteralSpec). The codec's JSON is one for the types used here
    /// (a bool, a quoted string, a list of strings).
    std::string defaultLiteral;
};

/// A key that fills `member` with `codec`.
template <class S, class T>
Key<S> key(const char* name, const char* hclType, T S::*member, spec::Codec<T> codec, Need need = Need::Optional) {
    auto field = spec::field(name, member, codec, spec::Presence::Always);
    Key<S> k{name,
             hclType,
             [field](const nlohmann::json& v, S& out, const std::string& at) {
                 return field.read(v, out, at, spec::Strictness::Strict);
             },
             need,
             {}};
    if (need == Need::Defaulted) k.defaultLiteral = codec.write(S{}.*member).dump();
    return k;
}

/// A key whose default is S{}'s member, told to Nomad as the schema's
/// literal: the default is spelled once, in S.
template <class S, class T>
Key<S> defaulted(const char* name, const char* hclType, T S::*member, spec::Codec<T> codec) {
    return key(name, hclType, member, std::move(codec), Need::Defaulted);
}

/// A key that fills an optional member (unset when left out).
template <class S, class T>
Key<S> key(const char* name, const char* hclType, std::optional<T> S::*member, spec::Codec<T> codec) {
    return {name, hclType,
            [member, codec](const nlohmann::json& v, S& out, const std::string& at) -> common::Result<void> {
                auto value = codec.read(v, at, spec::Strictness::Strict);
                if (!value) return value.error();
                out.*member = std::move(*value);
                return {};
            }};
}

/// What the schema says of a key, apart from how it is read.
struct Attr {
    const char* name;
    const char* hclType;
    bool required = false;
    std::string defaultLiteral;  ///< empty: no default
};

/// The rows of `keys` as the schema's attributes.
template <class S>
std::vector<Attr> attrs(const std::vector<Key<S>>& keys) {
    std::vector<Attr> out;
    for (const auto& k : keys) out.push_back({k.name, k.hclType, k.need == Need::Required, k.defaultLiteral});
    return out;
}

/// The row named `name`, or nullptr.
template <class S>
const Key<S>* find(const std::vector<Key<S>>& keys, const std::string& name) {
    for (const auto& k : keys)
        if (name == k.name) return &k;
    return nullptr;
}

/// Reads one key's value into `out`; null is left out (the struct keeps
/// its default). `prefix` is what key names are under ("config." in a
/// task's block, "" in the plugin's); `unknown` what an unknown key is
/// called ("unknown attribute").
template <class S>
common::Result<void> readKey(const std::vector<Key<S>>& keys, const std::string& name, const nlohmann::json& value,
                             S& out, const std::string& prefix, const std::string& unknown) {
    const Key<S>* k = find(keys, name);
    if (!k) return invalid(unknown + " " + prefix + name);
    if (value.is_null()) return {};
    if (auto r = k->read(value, out, prefix + name); !r) return asConfigError(r.error());
    return {};
}

/// Reads a decoded block (the cty value as JSON, null attributes being
/// ones it left out) into `out`, key by key, then checks the required
/// keys are there.
template <class S>
common::Result<void> readBlock(const std::vector<Key<S>>& keys, const nlohmann::json& block, S& out,
                               const std::string& prefix, const std::string& unknown) {
    for (const auto& [name, value] : block.items())
        if (auto r = readKey(keys, name, value, out, prefix, unknown); !r) return r.error();
    for (const auto& k : keys)
        if (k.need == Need::Required && (!block.contains(k.name) || block.at(k.name).is_null()))
            return invalid(prefix + k.name + " is required");
    return {};
}

}  // namespace taskscope::nomad::hclblock
