// nomad.slice's properties from the node_slice keys (node_slice.hpp).
#include "manager/node/node_slice.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace taskscope::manager {

namespace {

constexpr uint64_t kMiB = 1024 * 1024;

uint64_t readNumber(const std::string& path) {
    std::ifstream in(path);
    uint64_t v = 0;
    return (in >> v) ? v : 0;
}

}  // namespace

uint64_t defaultReservedPids(uint64_t processLimit) {
    return std::max<uint64_t>(1024, processLimit / 10);
}

uint64_t defaultReservedMemoryBytes(uint64_t memoryBytes) {
    return std::clamp<uint64_t>(memoryBytes / 10, 256 * kMiB, 4096 * kMiB);
}

scope::UnitProperties nodeSliceProperties(const NodeSliceConfig& config, const NodeCapacity& node) {
    scope::UnitProperties p;
    if (!config.enabled) return p;
    if (config.cpuWeight) p.emplace_back("CPUWeight", sdbus::Variant(config.cpuWeight));
    const uint64_t pids = config.reservedPids ? config.reservedPids : defaultReservedPids(node.processLimit);
    if (node.processLimit > pids) p.emplace_back("TasksMax", sdbus::Variant(node.processLimit - pids));
    const uint64_t memory =
        config.reservedMemoryMb ? config.reservedMemoryMb * kMiB : defaultReservedMemoryBytes(node.memoryBytes);
    if (node.memoryBytes > memory) p.emplace_back("MemoryMax", sdbus::Variant(node.memoryBytes - memory));
    return p;
}

NodeCapacity readNodeCapacity(const std::string& procRoot) {
    NodeCapacity c;
    const uint64_t pidMax = readNumber(procRoot + "/sys/kernel/pid_max");
    const uint64_t threadsMax = readNumber(procRoot + "/sys/kernel/threads-max");
    c.processLimit = pidMax && threadsMax ? std::min(pidMax, threadsMax) : std::max(pidMax, threadsMax);
    std::ifstream meminfo(procRoot + "/meminfo");
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib) {
        std::getline(meminfo, unit);
        if (key == "MemTotal:") {
            c.memoryBytes = kib * 1024;
            break;
        }
    }
    return c;
}

std::string describe(const scope::UnitProperties& properties) {
    std::ostringstream out;
    for (const auto& p : properties) {
        if (out.tellp() > 0) out << ' ';
        out << std::get<0>(p) << '=' << std::get<1>(p).get<uint64_t>();
    }
    return out.str();
}

}  // namespace taskscope::manager
