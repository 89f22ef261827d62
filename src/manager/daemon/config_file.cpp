// manager.json and its drop-ins read with spec/'s schema tables: one row per
// key, its codec and bounds, so that a bad key names the file and the key.
#include "manager/daemon/config_file.hpp"

#include <dirent.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "common/cpu_list.hpp"
#include "common/error_names.hpp"
#include "common/files.hpp"
#include "scope/slice_layout.hpp"
#include "scope/unit_name.hpp"
#include "spec/schema.hpp"

namespace taskscope::manager {

namespace {

using common::makeError;
using common::Result;
using spec::Codec;
using spec::field;
using spec::Json;
using spec::Strictness;

constexpr int64_t kDayMs = 24 * 3600 * 1000;

using Check = std::function<std::optional<std::string>(const std::string&)>;

Check absolutePath(size_t minSize = 1) {
    return [minSize](const std::string& s) -> std::optional<std::string> {
        if (s.size() < minSize || s[0] != '/')
            return minSize > 1 ? "must be an absolute path other than /" : "must be an absolute path";
        return std::nullopt;
    };
}

Codec<std::chrono::milliseconds> milliseconds(int64_t min, int64_t max) {
    auto n = spec::integer(min, max);
    return {[n](const Json& v, const std::string& at, Strictness how) -> Result<std::chrono::milliseconds> {
                auto ms = n.read(v, at, how);
                if (!ms) return ms.error();
                return std::chrono::milliseconds(*ms);
            },
            [](const std::chrono::milliseconds& ms) { return Json(ms.count()); }};
}

Codec<std::set<unsigned>> cpuList() {
    return {[](const Json& v, const std::string& at, Strictness) -> Result<std::set<unsigned>> {
                if (!v.is_string()) return spec::invalid(at + " must be a CPU list such as \"0\" or \"0-1\"");
                auto cpus = common::parseCpuList(v.get<std::string>());
                if (!cpus) return spec::invalid(at + ": " + cpus.error().message);
                return std::move(*cpus);
            },
            [](const std::set<unsigned>& cpus) { return Json(common::formatCpuList(cpus)); }};
}

Codec<std::vector<std::string>> hostPaths() {
    return {[](const Json& v, const std::string& at, Strictness) -> Result<std::vector<std::string>> {
                if (!v.is_array()) return spec::invalid(at + " must be an array of absolute paths");
                std::vector<std::string> paths;
                for (const auto& p : v) {
                    if (!p.is_string() || !spec::isCleanAbsolutePath(p.get<std::string>()) || p == "/")
                        return spec::invalid(at + " must be an array of absolute paths without '..', not /");
                    paths.push_back(p.get<std::string>());
                }
                if (paths.size() > 32) return spec::invalid(at + " must be at most 32 paths");
                return paths;
            },
            [](const std::vector<std::string>& v) { return Json(v); }};
}

Codec<uint64_t> capabilitySet() {
    return {
        [](const Json& v, const std::string& at, Strictness) -> Result<uint64_t> {
            if (!v.is_array()) return spec::invalid(at + " must be an array of capability names");
            uint64_t caps = 0;
            for (const auto& n : v) {
                const int cap = n.is_string() ? spec::capabilityNumber(n.get<std::string>()) : -1;
                if (cap < 0)
                    return spec::invalid(at + " must be an array of capability names (" + n.dump() + " is not one)");
                caps |= uint64_t{1} << cap;
            }
            return caps;
        },
        [](const uint64_t& caps) {
            Json out = Json::array();
            for (int c = 0; c < 64; ++c)
                if (caps & (uint64_t{1} << c)) out.push_back(spec::capabilityName(c));
            return out;
        }};
}

const spec::Schema<Config>& configSchema() {
    using spec::text;
    static const spec::Schema<Config> schema{
        {
            field("slice", &Config::slice, text([](const std::string& s) -> std::optional<std::string> {
                      if (!scope::isValidSliceName(s)) return "must be a slice unit name such as \"nomad.slice\"";
                      return std::nullopt;
                  })),
            field("nested_slices", &Config::nestedSlices, spec::boolean()),
            field("bucket_fanout", &Config::bucketFanout, spec::integerAs<unsigned>(1, scope::kMaxBucketFanOut)),
            field("scopes_per_slice", &Config::scopesPerSlice, spec::integerAs<unsigned>(1, 10000)),
            field("slice_weight_interval_ms", &Config::sliceWeightInterval, milliseconds(0, 3600 * 1000)),
            field("slice_weight_node_interval_ms", &Config::sliceWeightNodeInterval, milliseconds(0, 60 * 1000)),
            field("stop_window", &Config::stopWindow, spec::integerAs<unsigned>(0, 100000)),
            field("state_dir", &Config::stateDir, text(absolutePath())),
            field("shim_path", &Config::shimPath, text()),
            field("shim_unit", &Config::shimUnit, text([](const std::string& name) -> std::optional<std::string> {
                      if (!name.empty() && (name.size() < 7 || name.substr(name.size() - 6) != ".scope" ||
                                            name.find('/') != std::string::npos))
                          return "must be a scope unit name such as \"taskscope-shims.scope\", or \"\"";
                      return std::nullopt;
                  })),
            field("system_cores", &Config::systemCores, cpuList()),
            field("streamer", &Config::streamer, spec::boolean()),
            field("log_spool_dir", &Config::logSpoolDir, text(absolutePath())),
            field("log_max_files", &Config::logMaxFiles, spec::integerAs<int>(1, 1000)),
            field("log_max_file_size_mb", &Config::logMaxFileSizeMb, spec::integerAs<int>(1, 100000)),
            field("log_journal", &Config::logJournal, spec::boolean()),
            field("journal_socket", &Config::journalSocket, text(absolutePath())),
            field("job_timeout_ms", &Config::jobTimeoutMs, spec::integer(1000, kDayMs)),
            field("start_timeout_ms", &Config::startTimeoutMs, spec::integer(1000, kDayMs)),
            // 0: systemd's DefaultTasksMax.
            field("default_pids_max", &Config::defaultPidsMax, spec::integerAs<uint64_t>(0, int64_t{1} << 22)),
            field("dangling_scopes_enabled", &Config::danglingScopes, &ReconcilerConfig::enabled, spec::boolean()),
            field("dangling_scopes_dry_run", &Config::danglingScopes, &ReconcilerConfig::dryRun, spec::boolean()),
            field("dangling_scopes_period_ms", &Config::danglingScopes, &ReconcilerConfig::period,
                  milliseconds(1000, kDayMs)),
            field("dangling_scopes_creation_grace_ms", &Config::danglingScopes, &ReconcilerConfig::creationGrace,
                  milliseconds(0, kDayMs)),
            field("node_slice_limits", &Config::nodeSlice, &NodeSliceConfig::enabled, spec::boolean()),
            // 0: systemd's default weight (100) is left.
            field("node_slice_cpu_weight", &Config::nodeSlice, &NodeSliceConfig::cpuWeight,
                  spec::integerAs<uint64_t>(0, 10000)),
            // 0: the default reservation (node_slice.hpp).
            field("system_reserved_pids", &Config::nodeSlice, &NodeSliceConfig::reservedPids,
                  spec::integerAs<uint64_t>(0, int64_t{1} << 22)),
            field("system_reserved_memory_mb", &Config::nodeSlice, &NodeSliceConfig::reservedMemoryMb,
                  spec::integerAs<uint64_t>(0, int64_t{1} << 30)),
            field("isolation_default", &Config::isolation, &IsolationConfig::defaultIsolated, spec::boolean()),
            field("chroot_env", &Config::isolation, &IsolationConfig::chrootEnv, hostPaths()),
            field("allowed_capabilities", &Config::isolation, &IsolationConfig::allowedCaps, capabilitySet()),
            field("network_cni_path", &Config::network, &network::NodeNetworkConfig::cniPath,
                  text([](const std::string& s) -> std::optional<std::string> {
                      if (!s.empty() && s[0] != '/') return "must be an absolute path";
                      return std::nullopt;
                  })),
            field("network_conflist", &Config::network, &network::NodeNetworkConfig::conflistPath,
                  text([](const std::string& s) -> std::optional<std::string> {
                      if (!s.empty() && s[0] != '/') return "must be an absolute path";
                      return std::nullopt;
                  })),
            // Other than iproute2's and host-local's defaults only where the
            // node's are not to be touched (the bus tier runs on a host).
            field("network_netns_dir", &Config::network, &network::NodeNetworkConfig::netnsDir, text(absolutePath(2))),
            field("network_ipam_dir", &Config::network, &network::NodeNetworkConfig::ipamDir, text(absolutePath(2))),
            field("network_bridge", &Config::network, &network::NodeNetworkConfig::bridge,
                  text([](const std::string& s) -> std::optional<std::string> {
                      if (s.empty() || s.size() > 15) return "must be an interface name (1-15 characters)";
                      return std::nullopt;
                  })),
            field("network_subnet", &Config::network, &network::NodeNetworkConfig::subnet,
                  text([](const std::string& s) -> std::optional<std::string> {
                      if (s.find('/') == std::string::npos)
                          return "must be a subnet in CIDR form such as \"172.26.64.0/20\"";
                      return std::nullopt;
                  })),
            field("network_plugin_timeout_ms", &Config::network, &network::NodeNetworkConfig::pluginTimeoutMs,
                  spec::integer(100, 600000)),
        },
        {},
        {},
        {}};
    return schema;
}

Result<void> applyFile(const std::string& file, Config& c) {
    auto text = common::readFile(file);
    if (!text) {
        if (text.error().name == common::errors::kNotFound) return {};
        return text.error();
    }
    auto j = Json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return makeError(common::errors::kInvalidConfig, file + ": not a JSON object");
    if (auto r = spec::applyObject(configSchema(), j, c, ""); !r) {
        // A config has keys, not fields.
        auto message = r.error().message;
        if (message.rfind("unknown field ", 0) == 0) message.replace(0, 14, "unknown key ");
        return makeError(common::errors::kInvalidConfig, file + ": " + message);
    }
    return {};
}

}  // namespace

Result<Config> loadConfig(const std::string& path, Config c) {
    if (auto r = applyFile(path, c); !r) return r.error();
    const auto dropins = path + ".d";
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dropins.c_str()), &::closedir);
    if (!d) return c;
    std::vector<std::string> names;
    while (auto* e = ::readdir(d.get())) {
        std::string n = e->d_name;
        if (n.size() > 5 && n.substr(n.size() - 5) == ".json") names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    for (const auto& n : names)
        if (auto r = applyFile(dropins + "/" + n, c); !r) return r.error();
    return c;
}

}  // namespace taskscope::manager
