#include "network/network_spec.hpp"

#include <cctype>

#include "common/error_names.hpp"
#include "spec/schema.hpp"

namespace taskscope::network {

namespace {

using common::makeError;
using common::Result;
using spec::invalid;
using spec::Json;

// More than any allocation forwards; a bound on what a caller makes us hold.
constexpr size_t kMaxPorts = 1024;

spec::Codec<std::string> protocolCodec() {
    return spec::oneOf<std::string>({{"tcp", "tcp"}, {"udp", "udp"}});
}

const spec::Schema<PortMapping>& portSchema() {
    static const spec::Schema<PortMapping> schema{
        {
            spec::field("host_port", &PortMapping::hostPort, spec::integerAs<uint16_t>(1, 65535),
                        spec::Presence::Always, true),
            spec::field("container_port", &PortMapping::containerPort, spec::integerAs<uint16_t>(1, 65535)),
            spec::field("protocol", &PortMapping::protocol, protocolCodec()),
        },
        {},
        {},
        // container_port defaults to host_port.
        [](PortMapping& p) {
            if (p.containerPort == 0) p.containerPort = p.hostPort;
        }};
    return schema;
}

spec::Codec<std::optional<Json>> conflistCodec() {
    return {[](const Json& v, const std::string& at, spec::Strictness) -> Result<std::optional<Json>> {
                if (!v.is_object() || !v.contains("plugins") || !v["plugins"].is_array() || v["plugins"].empty())
                    return invalid(at + " must be a CNI network configuration list with plugins");
                for (const auto& p : v["plugins"])
                    if (!p.is_object() || !p.contains("type") || !p["type"].is_string())
                        return invalid("every " + at + " plugin needs a type");
                return std::optional<Json>(v);
            },
            [](const std::optional<Json>& v) { return v ? *v : Json(); }};
}

const spec::Schema<NetworkSpec>& networkSchema() {
    static const spec::Schema<NetworkSpec> schema{
        {
            spec::field("mode", &NetworkSpec::mode,
                        spec::oneOf<Mode>({{"none", Mode::None}, {"bridge", Mode::Bridge}})),
            spec::field("ports", &NetworkSpec::ports, spec::objects(portSchema(), kMaxPorts)),
            spec::field("conflist", &NetworkSpec::conflist, conflistCodec()),
        },
        {
            [](const NetworkSpec& n, const std::string&) -> Result<void> {
                for (size_t i = 0; i < n.ports.size(); ++i)
                    for (size_t k = 0; k < i; ++k)
                        if (n.ports[k].hostPort == n.ports[i].hostPort && n.ports[k].protocol == n.ports[i].protocol)
                            return invalid("host port " + std::to_string(n.ports[i].hostPort) + "/" +
                                           n.ports[i].protocol + " is mapped twice");
                return {};
            },
            [](const NetworkSpec& n, const std::string&) -> Result<void> {
                if (n.mode == Mode::None && (!n.ports.empty() || n.conflist))
                    return invalid("mode none has no ports and no plugins (use mode bridge)");
                return {};
            },
        },
        {},
        {}};
    return schema;
}

}  // namespace

const char* toString(Mode mode) {
    return mode == Mode::Bridge ? "bridge" : "none";
}

Result<NetworkSpec> parseNetworkSpec(const std::string& text) {
    if (text.empty()) return NetworkSpec{};
    auto j = spec::parseObject(text, "network spec");
    if (!j) return j.error();
    return spec::readObject(networkSchema(), *j, "");
}

Result<void> checkAllocId(const std::string& id) {
    auto bad = [&] {
        return makeError(
            common::errors::kInvalidName,
            "alloc_id '" + id + "' must be 1-64 characters of [A-Za-z0-9_.-], starting with a letter or digit");
    };
    if (id.empty() || id.size() > 64 || !std::isalnum(static_cast<unsigned char>(id[0]))) return bad();
    for (char c : id)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') return bad();
    return {};
}

}  // namespace taskscope::network
