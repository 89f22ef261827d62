#include "spec/task_limits.hpp"

#include <sys/resource.h>

#include <array>
#include <charconv>
#include <utility>

#include "spec/isolation.hpp"
#include "spec/json.hpp"

namespace taskscope::spec {

namespace {

// docker's names (github.com/docker/go-units ulimit.go), the RLIMIT_* of
// <sys/resource.h> each stands for.
constexpr std::array<std::pair<const char*, int>, 16> kUlimits{{
    {"as", RLIMIT_AS},
    {"core", RLIMIT_CORE},
    {"cpu", RLIMIT_CPU},
    {"data", RLIMIT_DATA},
    {"fsize", RLIMIT_FSIZE},
    {"locks", RLIMIT_LOCKS},
    {"memlock", RLIMIT_MEMLOCK},
    {"msgqueue", RLIMIT_MSGQUEUE},
    {"nice", RLIMIT_NICE},
    {"nofile", RLIMIT_NOFILE},
    {"nproc", RLIMIT_NPROC},
    {"rss", RLIMIT_RSS},
    {"rtprio", RLIMIT_RTPRIO},
    {"rttime", RLIMIT_RTTIME},
    {"sigpending", RLIMIT_SIGPENDING},
    {"stack", RLIMIT_STACK},
}};

constexpr const char kUnlimitedWord[] = "unlimited";

common::Result<uint64_t> limitValue(const std::string& s, const char* which) {
    if (s == kUnlimitedWord) return kUnlimited;
    uint64_t v = 0;
    const auto* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, v);
    if (s.empty() || ec != std::errc() || p != end)
        return invalid(std::string(which) + " limit '" + s + "' must be a non-negative integer or \"unlimited\"");
    return v;
}

std::string valueText(uint64_t v) {
    return v == kUnlimited ? kUnlimitedWord : std::to_string(v);
}

}  // namespace

int ulimitResource(const std::string& name) {
    for (const auto& [n, r] : kUlimits)
        if (name == n) return r;
    return -1;
}

std::string ulimitNames() {
    std::string out;
    for (const auto& [n, r] : kUlimits) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
}

common::Result<Ulimit> parseUlimit(const std::string& text) {
    const auto colon = text.find(':');
    const std::string softText = text.substr(0, colon);
    const std::string hardText = colon == std::string::npos ? softText : text.substr(colon + 1);
    auto soft = limitValue(softText, "soft");
    if (!soft) return soft.error();
    auto hard = limitValue(hardText, "hard");
    if (!hard) return hard.error();
    // The kernel refuses it (setrlimit: EINVAL); said here, with the numbers.
    if (*soft > *hard) return invalid("soft limit " + valueText(*soft) + " is above hard limit " + valueText(*hard));
    return Ulimit{*soft, *hard};
}

common::Result<std::map<std::string, Ulimit>> readUlimits(const Json& limits, const std::string& at) {
    std::map<std::string, Ulimit> out;
    for (const auto& [name, value] : limits.items()) {
        if (ulimitResource(name) < 0) return invalid(at + ": unknown limit '" + name + "' (" + ulimitNames() + ")");
        if (!value.is_string()) return invalid(at + "." + name + " must be a string, \"SOFT:HARD\" or \"N\"");
        auto limit = parseUlimit(value.get<std::string>());
        if (!limit) return invalid(at + "." + name + ": " + limit.error().message);
        out[name] = *limit;
    }
    return out;
}

std::string formatUlimit(const Ulimit& limit) {
    return valueText(limit.soft) + ":" + valueText(limit.hard);
}

bool validDevicePermissions(const std::string& p) {
    if (p.empty() || p.size() > 3) return false;
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] != 'r' && p[i] != 'w' && p[i] != 'm') return false;
        if (p.find(p[i], i + 1) != std::string::npos) return false;
    }
    return true;
}

bool isDevicePath(const std::string& p) {
    return isCleanAbsolutePath(p) && p.starts_with("/dev/");
}

}  // namespace taskscope::spec
