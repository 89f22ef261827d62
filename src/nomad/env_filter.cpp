// raw_exec's denied_envvars applied to a task's environment (env_filter.hpp).
#include "nomad/env_filter.hpp"

#include <iterator>

namespace taskscope::nomad {

namespace {

constexpr const char* kUnixAddr = "NOMAD_UNIX_ADDR";
constexpr const char* kUnixScheme = "unix://";
// Nomad's in-root secrets dir (allocdir.TaskSecretsContainerPath), which
// NOMAD_SECRETS_DIR names when the env has it.
constexpr const char* kInRootSecrets = "/secrets";

}  // namespace

bool globMatch(const std::string& pattern, const std::string& subject) {
    if (pattern.empty()) return subject.empty();
    if (pattern == "*") return true;
    std::vector<std::string> parts;
    size_t start = 0;
    for (;;) {
        const auto star = pattern.find('*', start);
        parts.push_back(pattern.substr(start, star == std::string::npos ? std::string::npos : star - start));
        if (star == std::string::npos) break;
        start = star + 1;
    }
    if (parts.size() == 1) return subject == pattern;
    const bool leading = pattern.front() == '*', trailing = pattern.back() == '*';
    std::string rest = subject;
    const size_t last = parts.size() - 1;
    for (size_t i = 0; i < last; ++i) {
        const auto at = rest.find(parts[i]);
        if (at == std::string::npos || (i == 0 && !leading && at != 0)) return false;
        rest = rest.substr(at + parts[i].size());
    }
    return trailing || rest.ends_with(parts[last]);
}

void removeDenied(std::map<std::string, std::string>& env, const std::vector<std::string>& denied) {
    if (denied.empty()) return;
    for (auto it = env.begin(); it != env.end();) {
        bool hit = false;
        for (const auto& pattern : denied) hit = hit || globMatch(pattern, it->first);
        it = hit ? env.erase(it) : std::next(it);
    }
}

void rewriteForHostRoot(std::map<std::string, std::string>& env, const HostDirs& dirs) {
    std::string inRootSecrets = kInRootSecrets;
    if (auto it = env.find("NOMAD_SECRETS_DIR"); it != env.end() && !it->second.empty()) inRootSecrets = it->second;
    const std::pair<const char*, const std::string*> paths[] = {
        {"NOMAD_ALLOC_DIR", &dirs.alloc}, {"NOMAD_TASK_DIR", &dirs.local}, {"NOMAD_SECRETS_DIR", &dirs.secrets}};
    for (const auto& [name, path] : paths)
        if (auto it = env.find(name); it != env.end()) it->second = *path;
    auto addr = env.find(kUnixAddr);
    if (addr == env.end()) return;
    const std::string prefix = std::string(kUnixScheme) + inRootSecrets + "/";
    if (addr->second.rfind(prefix, 0) == 0)
        addr->second = std::string(kUnixScheme) + dirs.secrets + "/" + addr->second.substr(prefix.size());
}

}  // namespace taskscope::nomad
