#include "nomad/driver_config.hpp"

#include <array>
#include <cctype>
#include <functional>

#include "nomad/config_values.hpp"
#include "spec/isolation.hpp"

namespace taskscope::nomad {

namespace {

using common::Result;
using nlohmann::json;

using config::boolean;
using config::invalid;
using config::text;
using config::texts;

// exec's Config.validate: "private" or "host".
Result<bool> isolationMode(const json& v, const std::string& key) {
    auto t = text(v, key);
    if (!t) return t.error();
    if (*t == "private") return false;
    if (*t == "host") return true;
    return invalid(key + " must be \"private\" or \"host\", not \"" + *t + "\"");
}

Result<spec::IdRanges> ranges(const json& v, const std::string& key) {
    auto t = text(v, key);
    if (!t) return t.error();
    auto r = spec::IdRanges::parse(*t, key);
    if (!r) return invalid(r.error().message);
    return r;
}

// Each key with what it fills: one table, read by one loop.
struct DriverKey {
    const char* name;
    std::function<Result<void>(const json&, DriverConfig&)> read;
};

template <class T, class F>
DriverKey key(const char* name, F parse, T DriverConfig::*member) {
    return {name, [name, parse, member](const json& v, DriverConfig& c) -> Result<void> {
                auto r = parse(v, name);
                if (!r) return r.error();
                c.*member = std::move(*r);
                return {};
            }};
}

const std::vector<DriverKey>& driverKeys() {
    static const std::vector<DriverKey> table = {
        key("enabled", boolean, &DriverConfig::enabled),
        {"default_isolation",
         [](const json& v, DriverConfig& c) -> Result<void> {
             auto t = text(v, "default_isolation");
             if (!t) return t.error();
             auto m = parseFsMode(*t);
             if (!m) return m.error().context("default_isolation");
             c.defaultIsolation = *m;
             return {};
         }},
        key("no_pivot_root", boolean, &DriverConfig::noPivotRoot),
        key("default_pid_mode", isolationMode, &DriverConfig::defaultPidHost),
        key("default_ipc_mode", isolationMode, &DriverConfig::defaultIpcHost),
        {"allow_caps",
         [](const json& v, DriverConfig& c) -> Result<void> {
             auto caps = parseCapList(v, "allow_caps");
             if (!caps) return caps.error();
             c.allowCaps = *caps;
             return {};
         }},
        key("denied_host_uids", ranges, &DriverConfig::deniedHostUids),
        key("denied_host_gids", ranges, &DriverConfig::deniedHostGids),
        key("denied_envvars", texts, &DriverConfig::deniedEnvvars),
        key("dynamic_workload_users", boolean, &DriverConfig::dynamicWorkloadUsers),
    };
    return table;
}

}  // namespace

Result<FsMode> parseFsMode(const std::string& text) {
    if (text == "chroot") return FsMode::Chroot;
    if (text == "none") return FsMode::None;
    return invalid("isolation must be \"chroot\" or \"none\", not \"" + text + "\"");
}

CapSet nomadDefaultCaps() { return spec::nomadDefaultCapabilityBits(); }

CapSet allKnownCaps() {
    CapSet s = 0;
    for (int c = 0; c < 64; ++c)
        if (spec::capabilityName(c).rfind("CAP_", 0) != 0) s |= CapSet{1} << c;
    return s;
}

Result<CapSet> parseCapList(const json& list, const std::string& key, bool* all) {
    if (!list.is_array()) return invalid(key + " must be a list of capability names");
    CapSet out = 0;
    for (const auto& e : list) {
        if (!e.is_string()) return invalid(key + " must be a list of capability names");
        const auto name = e.get<std::string>();
        // Nomad's capabilities.Set: "all" in any case is every capability.
        std::string lower;
        for (char ch : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (lower == "all" || lower == "cap_all") {
            out |= allKnownCaps();
            if (all) *all = true;
            continue;
        }
        const int n = spec::capabilityNumber(name);
        if (n < 0) return invalid(key + ": unknown capability \"" + name + "\" (names as in capabilities(7))");
        out |= CapSet{1} << n;
    }
    return out;
}

std::vector<std::string> capNames(CapSet set) {
    std::vector<std::string> out;
    for (int c = 0; c < 64; ++c)
        if (set & (CapSet{1} << c)) out.push_back(spec::capabilityName(c));
    return out;
}

Result<DriverConfig> parseDriverConfig(const json& config) {
    if (!config.is_object()) return invalid("the plugin config is not an object");
    DriverConfig out;
    for (const auto& [name, value] : config.items()) {
        const DriverKey* k = nullptr;
        for (const auto& candidate : driverKeys())
            if (name == candidate.name) k = &candidate;
        if (!k) return invalid("unknown plugin config attribute " + name);
        if (value.is_null()) continue;  // left out: the default
        if (auto r = k->read(value, out); !r) return r.error();
    }
    return out;
}

}  // namespace taskscope::nomad
