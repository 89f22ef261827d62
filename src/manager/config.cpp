#include "manager/config.hpp"

#include <dirent.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/cpu_list.hpp"
#include "common/files.hpp"
#include "scope/unit_name.hpp"

namespace taskscope::manager {

namespace {

using common::makeError;

constexpr int64_t kDayMs = 24 * 3600 * 1000;

common::Result<void> applyFile(const std::string& file, Config& c) {
    auto text = common::readFile(file);
    if (!text) {
        if (text.error().name == "NotFound") return {};
        return text.error();
    }
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return makeError("InvalidConfig", file + ": not a JSON object");
    for (const auto& [key, value] : j.items()) {
        auto bad = [&](const char* want) { return makeError("InvalidConfig", file + ": " + key + " must be " + want); };
        if (key == "slice") {
            if (!value.is_string() || !scope::isValidSliceName(value.get<std::string>()))
                return bad("a slice unit name such as \"nomad.slice\"");
            c.slice = value.get<std::string>();
        } else if (key == "state_dir") {
            if (!value.is_string() || value.get<std::string>().empty() || value.get<std::string>()[0] != '/')
                return bad("an absolute path");
            c.stateDir = value.get<std::string>();
        } else if (key == "shim_path") {
            if (!value.is_string()) return bad("a path");
            c.shimPath = value.get<std::string>();
        } else if (key == "shim_unit") {
            if (!value.is_string()) return bad("a scope unit name such as \"taskscope-shims.scope\", or \"\"");
            const auto name = value.get<std::string>();
            if (!name.empty() && (name.size() < 7 || name.substr(name.size() - 6) != ".scope" ||
                                  name.find('/') != std::string::npos))
                return bad("a scope unit name such as \"taskscope-shims.scope\", or \"\"");
            c.shimUnit = name;
        } else if (key == "system_cores") {
            if (!value.is_string()) return bad("a CPU list such as \"0\" or \"0-1\"");
            auto cpus = common::parseCpuList(value.get<std::string>());
            if (!cpus) return makeError("InvalidConfig", file + ": system_cores: " + cpus.error().message);
            c.systemCores = *cpus;
        } else if (key == "streamer") {
            if (!value.is_boolean()) return bad("true or false");
            c.streamer = value.get<bool>();
        } else if (key == "log_spool_dir") {
            if (!value.is_string() || value.get<std::string>().empty() || value.get<std::string>()[0] != '/')
                return bad("an absolute path");
            c.logSpoolDir = value.get<std::string>();
        } else if (key == "log_max_files") {
            if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 1000)
                return bad("an integer 1..1000");
            c.logMaxFiles = value.get<int>();
        } else if (key == "log_max_file_size_mb") {
            if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 100000)
                return bad("an integer 1..100000");
            c.logMaxFileSizeMb = value.get<int>();
        } else if (key == "job_timeout_ms") {
            if (!value.is_number_integer() || value.get<int64_t>() < 1000) return bad("an integer >= 1000");
            c.jobTimeoutMs = value.get<int64_t>();
        } else if (key == "default_pids_max") {
            if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > (int64_t{1} << 22))
                return bad("an integer 0..4194304 (0: systemd's DefaultTasksMax)");
            c.defaultPidsMax = value.get<uint64_t>();
        } else if (key == "dangling_scopes_enabled") {
            if (!value.is_boolean()) return bad("true or false");
            c.danglingScopes.enabled = value.get<bool>();
        } else if (key == "dangling_scopes_dry_run") {
            if (!value.is_boolean()) return bad("true or false");
            c.danglingScopes.dryRun = value.get<bool>();
        } else if (key == "dangling_scopes_period_ms") {
            if (!value.is_number_integer() || value.get<int64_t>() < 1000 || value.get<int64_t>() > kDayMs)
                return bad("an integer 1000..86400000");
            c.danglingScopes.period = std::chrono::milliseconds(value.get<int64_t>());
        } else if (key == "dangling_scopes_creation_grace_ms") {
            if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > kDayMs)
                return bad("an integer 0..86400000");
            c.danglingScopes.creationGrace = std::chrono::milliseconds(value.get<int64_t>());
        } else if (key == "isolation_default") {
            if (!value.is_boolean()) return bad("true or false");
            c.isolation.defaultIsolated = value.get<bool>();
        } else if (key == "chroot_env") {
            if (!value.is_array()) return bad("an array of absolute paths");
            std::vector<std::string> paths;
            for (const auto& p : value) {
                if (!p.is_string() || !spec::isCleanAbsolutePath(p.get<std::string>()) || p == "/")
                    return bad("an array of absolute paths without '..', not /");
                paths.push_back(p.get<std::string>());
            }
            if (paths.size() > 32) return bad("at most 32 paths");
            c.isolation.chrootEnv = std::move(paths);
        } else if (key == "allowed_capabilities") {
            if (!value.is_array()) return bad("an array of capability names");
            uint64_t caps = 0;
            for (const auto& n : value) {
                const int cap = n.is_string() ? spec::capabilityNumber(n.get<std::string>()) : -1;
                if (cap < 0) return bad(("an array of capability names (" + n.dump() + " is not one)").c_str());
                caps |= uint64_t{1} << cap;
            }
            c.isolation.allowedCaps = caps;
        } else if (key == "network_cni_path" || key == "network_conflist") {
            if (!value.is_string() || (!value.get<std::string>().empty() && value.get<std::string>()[0] != '/'))
                return bad("an absolute path");
            (key == "network_cni_path" ? c.network.cniPath : c.network.conflistPath) = value.get<std::string>();
        } else if (key == "network_netns_dir" || key == "network_ipam_dir") {
            // Other than iproute2's and host-local's defaults only where the
            // node's are not to be touched (the bus tier runs on a host).
            if (!value.is_string() || value.get<std::string>().size() < 2 || value.get<std::string>()[0] != '/')
                return bad("an absolute path other than /");
            (key == "network_netns_dir" ? c.network.netnsDir : c.network.ipamDir) = value.get<std::string>();
        } else if (key == "network_bridge") {
            if (!value.is_string() || value.get<std::string>().empty() || value.get<std::string>().size() > 15)
                return bad("an interface name (1-15 characters)");
            c.network.bridge = value.get<std::string>();
        } else if (key == "network_subnet") {
            if (!value.is_string() || value.get<std::string>().find('/') == std::string::npos)
                return bad("a subnet in CIDR form such as \"172.26.64.0/20\"");
            c.network.subnet = value.get<std::string>();
        } else if (key == "network_plugin_timeout_ms") {
            if (!value.is_number_integer() || value.get<int64_t>() < 100 || value.get<int64_t>() > 600000)
                return bad("an integer 100..600000");
            c.network.pluginTimeoutMs = value.get<int64_t>();
        } else {
            return makeError("InvalidConfig", file + ": unknown key " + key);
        }
    }
    return {};
}

}  // namespace

common::Result<Config> loadConfig(const std::string& path, Config c) {
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
