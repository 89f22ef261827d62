#include "network/cni_config.hpp"

#include "common/error_names.hpp"
#include "spec/json_text.hpp"

namespace taskscope::network {

using nlohmann::json;

json defaultConflist(const NodeNetworkConfig& node) {
    return json{
        {"cniVersion", "0.4.0"},
        {"name", node.networkName},
        {"plugins",
         json::array({
             json{{"type", "loopback"}},
             json{{"type", "bridge"},
                  {"bridge", node.bridge},
                  {"ipMasq", true},
                  {"isGateway", true},
                  {"forceAddress", true},
                  {"hairpinMode", true},
                  {"ipam",
                   {{"type", "host-local"},
                    {"ranges", json::array({json::array({json{{"subnet", node.subnet}}})})},
                    {"routes", json::array({json{{"dst", "0.0.0.0/0"}}})}}}},
             json{{"type", "firewall"}, {"backend", "iptables"}},
             json{{"type", "portmap"}, {"capabilities", {{"portMappings", true}}}, {"snat", true}},
         })},
    };
}

json pluginInput(const json& conflist, const json& plugin, const json& prevResult,
                 const std::vector<PortMapping>& ports) {
    json in = plugin;
    in["name"] = conflist.value("name", "taskscope");
    in["cniVersion"] = conflist.value("cniVersion", "0.4.0");
    if (!prevResult.is_null()) in["prevResult"] = prevResult;
    const auto caps = plugin.find("capabilities");
    if (caps != plugin.end() && caps->is_object() && caps->value("portMappings", false)) {
        json mappings = json::array();
        for (const auto& p : ports)
            mappings.push_back({{"hostPort", p.hostPort}, {"containerPort", p.containerPort}, {"protocol", p.protocol}});
        in["runtimeConfig"]["portMappings"] = mappings;
    }
    return in;
}

common::Result<CniResult> parseCniResult(const std::string& out) {
    auto parsed = spec::parseJson(out, "plugin result");
    if (!parsed || !parsed->is_object())
        return common::makeError(
            common::errors::kCniFailed,
            (parsed ? "plugin result is not a JSON object" : parsed.error().message) + ": " + out.substr(0, 200));
    json j = std::move(*parsed);
    CniResult r;
    if (auto ips = j.find("ips"); ips != j.end() && ips->is_array())
        for (const auto& ip : *ips)
            if (ip.is_object() && ip.contains("address") && ip["address"].is_string())
                r.addresses.push_back(ip["address"].get<std::string>());
    r.raw = std::move(j);
    return r;
}

common::Error cniError(const std::string& plugin, const std::string& command, const std::string& out,
                       const std::string& err, int status) {
    std::string what = "CNI plugin " + plugin + " " + command + " failed";
    auto parsed = spec::parseJson(out, "plugin error");
    const json j = parsed ? std::move(*parsed) : json();
    // The CNI spec's error document: "msg" and "details" are strings. One
    // whose "msg" is not (a plugin's bug, or not an error document at all)
    // is read as plain output below: value() of a number would throw out of
    // here (fuzz/corpus/cni_result/crash-msg-not-a-string). Both are cut,
    // as stderr is: the message goes into a D-Bus error and the journal.
    if (j.is_object() && j.contains("msg") && j["msg"].is_string()) {
        what += ": " + j["msg"].get<std::string>().substr(0, 500);
        if (j.contains("details") && j["details"].is_string() && !j["details"].get<std::string>().empty())
            what += " (" + j["details"].get<std::string>().substr(0, 500) + ")";
        if (j.contains("code")) what += " [code " + j["code"].dump() + "]";
        return common::makeError(common::errors::kCniFailed, what);
    }
    what += " (" + std::string(status >= 0 ? "exit status " + std::to_string(status) : "killed") + ")";
    if (!err.empty()) what += ": " + err.substr(0, 500);
    return common::makeError(common::errors::kCniFailed, what);
}

}  // namespace taskscope::network
