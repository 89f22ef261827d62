#include "plugins/plugin_spec.hpp"

namespace taskscope::plugins {

using common::makeError;
using common::Result;
using nlohmann::json;

namespace {

common::Error invalid(const std::string& what) { return makeError("InvalidSpec", "plugin." + what); }

// Names become path components and object paths: a conservative alphabet,
// as CSI's own provider names use.
bool validName(const std::string& s) {
    if (s.empty() || s.size() > 48 || s.front() == '.' || s.front() == '-') return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
    return s.find("..") == std::string::npos;
}

Result<std::string> getString(const json& v, const char* field) {
    if (!v.is_string()) return invalid(std::string(field) + " must be a string");
    return v.get<std::string>();
}

Result<int64_t> getMs(const json& v, const char* field, int64_t min, int64_t max) {
    if (!v.is_number_integer()) return invalid(std::string(field) + " must be an integer");
    const auto n = v.get<int64_t>();
    if (n < min || n > max)
        return invalid(std::string(field) + " must be between " + std::to_string(min) + " and " + std::to_string(max));
    return n;
}

}  // namespace

Result<PluginSpec> parsePluginSpec(const json& value) {
    if (!value.is_object()) return invalid("plugin must be an object");
    PluginSpec p;
    for (const auto& [key, v] : value.items()) {
        if (key == "type") {
            auto s = getString(v, "type");
            if (!s) return s.error();
            if (*s != "csi") return invalid("type '" + *s + "' is not known (csi)");
            p.type = *s;
        } else if (key == "name") {
            auto s = getString(v, "name");
            if (!s) return s.error();
            if (!validName(*s)) return invalid("name '" + *s + "' must be 1-48 of [A-Za-z0-9._-], not starting with . or -");
            p.name = *s;
        } else if (key == "mount_dir") {
            auto s = getString(v, "mount_dir");
            if (!s) return s.error();
            if (s->empty() || s->front() != '/' || s->find("/../") != std::string::npos || s->ends_with("/.."))
                return invalid("mount_dir must be an absolute path without ..");
            p.mountDir = *s;
        } else if (key == "socket") {
            auto s = getString(v, "socket");
            if (!s) return s.error();
            if (!validName(*s)) return invalid("socket '" + *s + "' must be a plain file name");
            p.socket = *s;
        } else if (key == "health_interval_ms") {
            auto n = getMs(v, "health_interval_ms", 100, 3600 * 1000);
            if (!n) return n.error();
            p.healthIntervalMs = *n;
        } else if (key == "socket_timeout_ms") {
            auto n = getMs(v, "socket_timeout_ms", 100, 3600 * 1000);
            if (!n) return n.error();
            p.socketTimeoutMs = *n;
        } else {
            return invalid("unknown field " + key);
        }
    }
    if (p.type.empty()) return invalid("type is required");
    if (p.name.empty()) return invalid("name is required");
    return p;
}

std::optional<PluginSpec> pluginOfSpec(const std::string& specJson) {
    const auto j = json::parse(specJson, nullptr, false);
    if (!j.is_object() || !j.contains("plugin")) return std::nullopt;
    auto p = parsePluginSpec(j.at("plugin"));
    if (!p) return std::nullopt;
    return *p;
}

std::string pluginId(const PluginSpec& spec) { return spec.type + "/" + spec.name; }

std::string pluginHostDir(const std::string& root, const PluginSpec& spec) {
    return root + "/" + spec.type + "/" + spec.name;
}

}  // namespace taskscope::plugins
