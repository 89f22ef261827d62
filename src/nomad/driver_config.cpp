// The plugin block read and checked through its key table (driver_config.hpp).
#include "nomad/driver_config.hpp"

#include <algorithm>
#include <cctype>

#include "spec/isolation.hpp"

namespace taskscope::nomad {

namespace {

using common::Result;
using nlohmann::json;

using hclblock::invalid;

// exec's Config.validate: "private" or "host".
spec::Codec<bool> isolationMode() {
    return spec::oneOf<bool>({{"private", false}, {"host", true}});
}

// exec's and raw_exec's denied_host_uids/gids: idset syntax ("0,10-20").
spec::Codec<spec::IdRanges> idRanges() {
    const auto text = spec::text();
    return {[text](const json& v, const std::string& at, spec::Strictness how) -> Result<spec::IdRanges> {
                auto t = text.read(v, at, how);
                if (!t) return t.error();
                return spec::IdRanges::parse(*t, at);
            },
            [](const spec::IdRanges& r) { return json(r.text()); }};
}

}  // namespace

spec::Codec<FsMode> fsModeCodec() {
    return spec::oneOf<FsMode>({{"chroot", FsMode::Chroot}, {"none", FsMode::None}});
}

Result<FsMode> parseFsMode(const std::string& text) {
    auto m = fsModeCodec().read(json(text), "isolation", spec::Strictness::Strict);
    if (!m) return hclblock::asConfigError(m.error());
    return m;
}

spec::Codec<CapSet> capListCodec() {
    return {[](const json& v, const std::string& at, spec::Strictness) { return parseCapList(v, at); },
            [](const CapSet& set) {
                // In name order, as Nomad's own literal (capabilities.HCLSpecLiteral).
                auto names = capNames(set);
                std::sort(names.begin(), names.end());
                return json(names);
            }};
}

// The keys of Nomad's exec and raw_exec drivers' plugin blocks, as their
// configSpec declares them at Nomad commit
// aa026cc99cfb74a77e519a1c1f0c78ba1b452705 (2026-08-21;
// drivers/exec/driver.go, drivers/rawexec/driver.go), with the same types
// and defaults, so that a plugin block written for either decodes here
// unchanged; taskscope's own after them. Defaults are DriverConfig's.
const std::vector<hclblock::Key<DriverConfig>>& driverConfigKeys() {
    using hclblock::defaulted;
    using hclblock::key;
    static const std::vector<hclblock::Key<DriverConfig>> table = {
        // raw_exec's `enabled` defaults to false (exec has none and is
        // always on); taskscope's to true, as before: an installed driver runs.
        defaulted("enabled", "bool", &DriverConfig::enabled, spec::boolean()),
        // exec.
        defaulted("no_pivot_root", "bool", &DriverConfig::noPivotRoot, spec::boolean()),
        defaulted("default_pid_mode", "string", &DriverConfig::defaultPidHost, isolationMode()),
        defaulted("default_ipc_mode", "string", &DriverConfig::defaultIpcHost, isolationMode()),
        // exec's default is capabilities.HCLSpecLiteral
        // (drivers/shared/capabilities/defaults.go), nomadDefaultCaps here.
        defaulted("allow_caps", "list(string)", &DriverConfig::allowCaps, capListCodec()),
        // exec and raw_exec.
        key("denied_host_uids", "string", &DriverConfig::deniedHostUids, idRanges()),
        key("denied_host_gids", "string", &DriverConfig::deniedHostGids, idRanges()),
        // raw_exec.
        key("denied_envvars", "list(string)", &DriverConfig::deniedEnvvars, spec::texts()),
        // taskscope's.
        defaulted("default_isolation", "string", &DriverConfig::defaultIsolation, fsModeCodec()),
        defaulted("dynamic_workload_users", "bool", &DriverConfig::dynamicWorkloadUsers, spec::boolean()),
    };
    return table;
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
    if (auto r = hclblock::readBlock(driverConfigKeys(), config, out, "", "unknown plugin config attribute"); !r)
        return r.error();
    return out;
}

}  // namespace taskscope::nomad
