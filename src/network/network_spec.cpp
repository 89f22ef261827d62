#include "network/network_spec.hpp"

#include <cctype>

namespace taskscope::network {

namespace {

using nlohmann::json;
using common::makeError;
using common::Result;

common::Error invalid(const std::string& message) { return makeError("InvalidSpec", message); }

Result<uint16_t> port(const json& j, const std::string& key) {
    if (!j.is_number_integer()) return invalid(key + " must be an integer");
    const auto v = j.get<int64_t>();
    if (v < 1 || v > 65535) return invalid(key + " is " + std::to_string(v) + ", outside 1..65535");
    return static_cast<uint16_t>(v);
}

Result<PortMapping> parsePort(const json& j, size_t index) {
    const auto at = "ports[" + std::to_string(index) + "]";
    if (!j.is_object()) return invalid(at + " must be an object");
    PortMapping p;
    bool haveHost = false, haveContainer = false;
    for (const auto& [key, value] : j.items()) {
        if (key == "host_port") {
            auto v = port(value, at + ".host_port");
            if (!v) return v.error();
            p.hostPort = *v;
            haveHost = true;
        } else if (key == "container_port") {
            auto v = port(value, at + ".container_port");
            if (!v) return v.error();
            p.containerPort = *v;
            haveContainer = true;
        } else if (key == "protocol") {
            if (!value.is_string() || (value != "tcp" && value != "udp"))
                return invalid(at + ".protocol must be \"tcp\" or \"udp\"");
            p.protocol = value.get<std::string>();
        } else {
            return invalid("unknown field " + at + "." + key);
        }
    }
    if (!haveHost) return invalid(at + ".host_port is required");
    if (!haveContainer) p.containerPort = p.hostPort;
    return p;
}

}  // namespace

const char* toString(Mode mode) { return mode == Mode::Bridge ? "bridge" : "none"; }

Result<NetworkSpec> parseNetworkSpec(const std::string& text) {
    NetworkSpec spec;
    if (text.empty()) return spec;
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) return invalid("network spec is not valid JSON");
    if (!j.is_object()) return invalid("network spec must be a JSON object");
    bool havePorts = false;
    for (const auto& [key, value] : j.items()) {
        if (key == "mode") {
            if (value == "none") spec.mode = Mode::None;
            else if (value == "bridge") spec.mode = Mode::Bridge;
            else return invalid("mode must be \"none\" or \"bridge\", not " + value.dump());
        } else if (key == "ports") {
            if (!value.is_array()) return invalid("ports must be an array");
            for (size_t i = 0; i < value.size(); ++i) {
                auto p = parsePort(value[i], i);
                if (!p) return p.error();
                for (const auto& q : spec.ports)
                    if (q.hostPort == p->hostPort && q.protocol == p->protocol)
                        return invalid("host port " + std::to_string(p->hostPort) + "/" + p->protocol +
                                       " is mapped twice");
                spec.ports.push_back(*p);
            }
            havePorts = !spec.ports.empty();
        } else if (key == "conflist") {
            if (!value.is_object() || !value.contains("plugins") || !value["plugins"].is_array() ||
                value["plugins"].empty())
                return invalid("conflist must be a CNI network configuration list with plugins");
            for (const auto& p : value["plugins"])
                if (!p.is_object() || !p.contains("type") || !p["type"].is_string())
                    return invalid("every conflist plugin needs a type");
            spec.conflist = value;
        } else {
            return invalid("unknown field " + key);
        }
    }
    if (spec.mode == Mode::None && (havePorts || spec.conflist))
        return invalid("mode none has no ports and no plugins (use mode bridge)");
    return spec;
}

Result<void> checkAllocId(const std::string& id) {
    auto bad = [&] {
        return makeError("InvalidName", "alloc_id '" + id +
                                            "' must be 1-64 characters of [A-Za-z0-9_.-], starting with a letter "
                                            "or digit");
    };
    if (id.empty() || id.size() > 64 || !std::isalnum(static_cast<unsigned char>(id[0]))) return bad();
    for (char c : id)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') return bad();
    return {};
}

}  // namespace taskscope::network
