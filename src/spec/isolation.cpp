#include "spec/isolation.hpp"

#include <array>
#include <cctype>

namespace taskscope::spec {

namespace {

// linux/capability.h, in number order (0..40).
constexpr std::array<const char*, 41> kCapNames = {"CHOWN",
                                                   "DAC_OVERRIDE",
                                                   "DAC_READ_SEARCH",
                                                   "FOWNER",
                                                   "FSETID",
                                                   "KILL",
                                                   "SETGID",
                                                   "SETUID",
                                                   "SETPCAP",
                                                   "LINUX_IMMUTABLE",
                                                   "NET_BIND_SERVICE",
                                                   "NET_BROADCAST",
                                                   "NET_ADMIN",
                                                   "NET_RAW",
                                                   "IPC_LOCK",
                                                   "IPC_OWNER",
                                                   "SYS_MODULE",
                                                   "SYS_RAWIO",
                                                   "SYS_CHROOT",
                                                   "SYS_PTRACE",
                                                   "SYS_PACCT",
                                                   "SYS_ADMIN",
                                                   "SYS_BOOT",
                                                   "SYS_NICE",
                                                   "SYS_RESOURCE",
                                                   "SYS_TIME",
                                                   "SYS_TTY_CONFIG",
                                                   "MKNOD",
                                                   "LEASE",
                                                   "AUDIT_WRITE",
                                                   "AUDIT_CONTROL",
                                                   "SETFCAP",
                                                   "MAC_OVERRIDE",
                                                   "MAC_ADMIN",
                                                   "SYSLOG",
                                                   "WAKE_ALARM",
                                                   "BLOCK_SUSPEND",
                                                   "AUDIT_READ",
                                                   "PERFMON",
                                                   "BPF",
                                                   "CHECKPOINT_RESTORE"};

}  // namespace

uint64_t nomadDefaultCapabilityBits() {
    uint64_t bits = 0;
    for (const char* n : kNomadDefaultCapabilities) bits |= uint64_t{1} << capabilityNumber(n);
    return bits;
}

int capabilityNumber(const std::string& name) {
    std::string up;
    for (char c : name) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (up.rfind("CAP_", 0) == 0) up.erase(0, 4);
    for (size_t i = 0; i < kCapNames.size(); ++i)
        if (up == kCapNames[i]) return static_cast<int>(i);
    return -1;
}

std::string capabilityName(int number) {
    if (number < 0 || number >= static_cast<int>(kCapNames.size())) return "CAP_" + std::to_string(number);
    return kCapNames[static_cast<size_t>(number)];
}

bool isCleanAbsolutePath(const std::string& p) {
    if (p.empty() || p.front() != '/' || p.find('\0') != std::string::npos) return false;
    size_t start = 1;
    while (start <= p.size()) {
        auto end = p.find('/', start);
        if (end == std::string::npos) end = p.size();
        const auto part = p.substr(start, end - start);
        if (part == ".." || part == "." || (part.empty() && end != p.size())) return false;
        start = end + 1;
    }
    return p.size() == 1 || p.back() != '/';
}

}  // namespace taskscope::spec
