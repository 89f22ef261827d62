#include "manager/task_spec.hpp"

#include <algorithm>

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/cpu_list.hpp"
#include "common/identity.hpp"
#include "common/signals.hpp"

namespace taskscope::manager {

namespace {

using nlohmann::json;
using common::makeError;
using common::Result;

constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

common::Error invalid(const std::string& message) { return makeError("InvalidSpec", message); }

Result<std::string> getString(const json& j, const char* key) {
    if (!j.is_string()) return invalid(std::string(key) + " must be a string");
    return j.get<std::string>();
}

Result<int64_t> getInt(const json& j, const char* key, int64_t min, int64_t max) {
    if (!j.is_number_integer()) return invalid(std::string(key) + " must be an integer");
    const auto v = j.get<int64_t>();
    if (v < min || v > max)
        return invalid(std::string(key) + " is " + std::to_string(v) + ", outside " + std::to_string(min) + ".." +
                       std::to_string(max));
    return v;
}

Result<void> parseResources(const json& j, scope::Resources& r) {
    if (!j.is_object()) return invalid("resources must be an object");
    constexpr int64_t kMaxMb = int64_t{1} << 40;
    for (const auto& [key, value] : j.items()) {
        if (key == "memory_mb") {
            auto v = getInt(value, "resources.memory_mb", 1, kMaxMb);
            if (!v) return v.error();
            r.memoryMb = *v;
        } else if (key == "memory_max_mb") {
            auto v = getInt(value, "resources.memory_max_mb", -1, kMaxMb);
            if (!v) return v.error();
            if (*v == 0) return invalid("resources.memory_max_mb must be positive, or -1 for no hard limit");
            r.memoryMaxMb = *v;
        } else if (key == "cpu_shares") {
            auto v = getInt(value, "resources.cpu_shares", 2, 262144);
            if (!v) return v.error();
            r.cpuShares = static_cast<uint64_t>(*v);
        } else if (key == "cpu_quota_percent") {
            auto v = getInt(value, "resources.cpu_quota_percent", 1, 100000);
            if (!v) return v.error();
            r.cpuQuotaPercent = static_cast<uint64_t>(*v);
        } else if (key == "pids_max") {
            auto v = getInt(value, "resources.pids_max", 1, int64_t{1} << 22);
            if (!v) return v.error();
            r.pidsMax = static_cast<uint64_t>(*v);
        } else if (key == "cores") {
            auto v = getInt(value, "resources.cores", 0, 4096);
            if (!v) return v.error();
            r.cores = static_cast<uint32_t>(*v);
        } else if (key == "cpuset") {
            auto v = getString(value, "resources.cpuset");
            if (!v) return v.error();
            auto cpus = common::parseCpuList(*v);
            if (!cpus) return invalid("resources.cpuset: " + cpus.error().message);
            if (cpus->empty()) return invalid("resources.cpuset must name at least one core");
            r.cpuset = std::move(*cpus);
        } else {
            return invalid("unknown field resources." + key);
        }
    }
    if (!r.cpuset.empty() && r.cores.value_or(0) > 0)
        return invalid("resources.cores and resources.cpuset exclude each other");
    if (r.memoryMb && r.memoryMaxMb && *r.memoryMaxMb != -1 && *r.memoryMaxMb < *r.memoryMb)
        return invalid("resources.memory_max_mb (" + std::to_string(*r.memoryMaxMb) + ") is below memory_mb (" +
                       std::to_string(*r.memoryMb) + ")");
    return {};
}

Result<void> parseField(const std::string& key, const json& value, TaskSpec& s) {
    if (key == "command") {
        auto v = getString(value, "command");
        if (!v) return v.error();
        s.command = *v;
    } else if (key == "args") {
        if (!value.is_array()) return invalid("args must be an array of strings");
        for (const auto& a : value) {
            if (!a.is_string()) return invalid("args must be an array of strings");
            s.args.push_back(a.get<std::string>());
        }
    } else if (key == "env") {
        if (!value.is_object()) return invalid("env must be an object of strings");
        for (const auto& [k, v] : value.items()) {
            if (!v.is_string()) return invalid("env." + k + " must be a string");
            if (k.empty() || k.find('=') != std::string::npos) return invalid("env name '" + k + "' is not valid");
            s.env[k] = v.get<std::string>();
        }
    } else if (key == "secret_args") {
        if (!value.is_boolean()) return invalid("secret_args must be true or false");
        s.secretArgs = value.get<bool>();
    } else if (key == "cwd") {
        auto v = getString(value, "cwd");
        if (!v) return v.error();
        if (v->empty() || v->front() != '/') return invalid("cwd must be an absolute path");
        s.cwd = *v;
    } else if (key == "user") {
        auto v = getString(value, "user");
        if (!v) return v.error();
        s.user = *v;
    } else if (key == "group") {
        auto v = getString(value, "group");
        if (!v) return v.error();
        s.group = *v;
    } else if (key == "kill_signal") {
        auto v = getString(value, "kill_signal");
        if (!v) return v.error();
        auto sig = common::parseSignal(*v);
        if (!sig) return invalid("kill_signal: " + sig.error().message);
        s.killSignal = *sig;
    } else if (key == "kill_timeout_ms") {
        auto v = getInt(value, "kill_timeout_ms", 0, 24 * 3600 * 1000);
        if (!v) return v.error();
        s.killTimeoutMs = *v;
    } else if (key == "logs") {
        if (!value.is_boolean()) return invalid("logs must be true or false");
        s.logs = value.get<bool>();
    } else if (key == "log_max_files") {
        auto v = getInt(value, "log_max_files", 1, 1000);
        if (!v) return v.error();
        s.logMaxFiles = static_cast<int>(*v);
    } else if (key == "log_max_file_size_mb") {
        auto v = getInt(value, "log_max_file_size_mb", 1, 100000);
        if (!v) return v.error();
        s.logMaxFileSizeMb = static_cast<int>(*v);
    } else if (key == "stdout_path" || key == "stderr_path") {
        auto v = getString(value, key.c_str());
        if (!v) return v.error();
        if (v->empty() || v->front() != '/') return invalid(key + " must be an absolute path");
        (key == "stdout_path" ? s.stdoutPath : s.stderrPath) = *v;
    } else if (key == "resources") {
        return parseResources(value, s.resources);
    } else if (key == "plugin") {
        auto p = plugins::parsePluginSpec(value);
        if (!p) return p.error();
        s.plugin = std::move(*p);
    } else if (key == "isolation") {
        auto iso = parseIsolation(value);
        if (!iso) return iso.error();
        s.isolation = std::move(*iso);
        s.isolationGiven = true;
    } else if (key == "network_namespace") {
        if (value != "alloc" && value != "host") return invalid("network_namespace must be \"alloc\" or \"host\"");
        s.joinAllocNetwork = value == "alloc";
    } else {
        return invalid("unknown field " + key);
    }
    return {};
}

Result<std::string> findExecutable(const std::string& command, const std::string& pathVar) {
    auto isExecutable = [](const std::string& p) {
        struct stat st {};
        return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
    };
    if (command.find('/') != std::string::npos) {
        if (command.front() != '/') return invalid("command '" + command + "' must be absolute or a bare name");
        if (isExecutable(command)) return command;
        return makeError("NoSuchBinary", "command " + command + " is not an executable file");
    }
    size_t start = 0;
    while (start <= pathVar.size()) {
        auto end = pathVar.find(':', start);
        if (end == std::string::npos) end = pathVar.size();
        const auto dir = pathVar.substr(start, end - start);
        if (!dir.empty() && isExecutable(dir + "/" + command)) return dir + "/" + command;
        start = end + 1;
    }
    return makeError("NoSuchBinary", "command '" + command + "' not found in PATH " + pathVar);
}

}  // namespace

Result<scope::Resources> parseResources(const std::string& text) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) return invalid("resources are not valid JSON");
    scope::Resources r;
    if (auto ok = parseResources(j, r); !ok) return ok.error();
    return r;
}

Result<TaskSpec> parseTaskSpec(const std::string& text) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) return invalid("spec is not valid JSON");
    if (!j.is_object()) return invalid("spec must be a JSON object");
    TaskSpec spec;
    for (const auto& [key, value] : j.items())
        if (auto r = parseField(key, value, spec); !r) return r.error();
    if (spec.command.empty()) return invalid("command is required");
    // Output that goes to the caller's files is not the streamer's to keep.
    if (!spec.stdoutPath.empty() || !spec.stderrPath.empty()) spec.logs = false;
    return spec;
}

Result<void> resolveTaskSpec(TaskSpec& spec) {
    // An isolated task's user is looked up in its root once that is known
    // (resolveRootIdentity), not in the host's databases.
    if (!spec.isolation.filesystem) {
        auto id = common::resolveIdentity(spec.user, spec.group);
        if (!id) return id.error();
        spec.uid = id->uid;
        spec.gid = id->gid;
        spec.groups = std::move(id->groups);
    }

    if (!spec.env.count("PATH")) spec.env["PATH"] = kDefaultPath;
    auto path = findExecutable(spec.command, spec.env["PATH"]);
    if (!path) return path.error();
    spec.path = *path;

    // An isolated task's cwd is a path in its root, which only exists once
    // the shim built it: the shim's chdir step reports a missing one.
    if (spec.isolation.filesystem) return {};
    struct stat st {};
    if (::stat(spec.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return invalid("cwd " + spec.cwd + " is not a directory");
    return {};
}

Result<void> resolveRootIdentity(TaskSpec& spec) {
    if (!spec.isolation.filesystem) return {};
    // The root's /etc is the host's when chroot_env binds it there, else
    // the task dir's own etc/ (a per-task chroot_env without /etc).
    const auto& env = spec.isolation.chrootEnv.value_or(std::vector<std::string>{});
    const bool hostEtc = std::find(env.begin(), env.end(), "/etc") != env.end();
    const auto etc = hostEtc ? std::string("/etc") : spec.isolation.taskDir + "/etc";
    struct stat st {};
    if (spec.user == "root" && spec.group.empty() && ::stat((etc + "/passwd").c_str(), &st) != 0) {
        // A root without a user database still has root.
        spec.uid = 0;
        spec.gid = 0;
        spec.groups = {0};
        return {};
    }
    auto id = common::resolveIdentityIn(etc, spec.user, spec.group);
    if (!id) return id.error();
    spec.uid = id->uid;
    spec.gid = id->gid;
    spec.groups = std::move(id->groups);
    return {};
}

}  // namespace taskscope::manager
