// The unit-property table: each systemd property once, with how a task's
// limits (and a slice's weight and cores) become its value.
#include "scope/resources.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>

#include "scope/slice_weights.hpp"

namespace taskscope::scope {

namespace {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kInfinity = std::numeric_limits<uint64_t>::max();

using Appender = std::function<std::optional<sdbus::Variant>(const Resources&)>;
using SliceAppender = std::function<std::optional<sdbus::Variant>(const SliceResources&)>;

// memory_mb is the reservation; memory_max_mb, when larger, is the hard
// limit and memory_mb becomes MemoryLow (runc maps Nomad's
// MemoryReservation to memory.low the same way). Without memory_max_mb,
// memory_mb itself is the hard limit.
std::optional<sdbus::Variant> memoryMax(const Resources& r) {
    if (r.memoryMaxMb) {
        if (*r.memoryMaxMb < 0) return sdbus::Variant(kInfinity);
        return sdbus::Variant(static_cast<uint64_t>(*r.memoryMaxMb) * kMiB);
    }
    if (r.memoryMb) return sdbus::Variant(static_cast<uint64_t>(*r.memoryMb) * kMiB);
    return std::nullopt;
}

std::optional<sdbus::Variant> memoryLow(const Resources& r) {
    if (r.memoryMaxMb && r.memoryMb) return sdbus::Variant(static_cast<uint64_t>(*r.memoryMb) * kMiB);
    // memory_mb alone is the hard limit, and no reservation: said as 0, so
    // that an update of a task that oversubscribed takes its old one away
    // (0 is systemd's default, so a start is no different).
    if (r.memoryMb) return sdbus::Variant(uint64_t{0});
    return std::nullopt;
}

// Tasks never swap: a limit that swap could stretch is no limit.
std::optional<sdbus::Variant> memorySwapMax(const Resources& r) {
    if (r.memoryMb || r.memoryMaxMb) return sdbus::Variant(uint64_t{0});
    return std::nullopt;
}

std::optional<sdbus::Variant> cpuWeight(const Resources& r) {
    if (r.cpuShares) return sdbus::Variant(cpuWeightFromShares(*r.cpuShares));
    return std::nullopt;
}

std::optional<sdbus::Variant> cpuQuota(const Resources& r) {
    if (r.cpuQuotaPercent) return sdbus::Variant(*r.cpuQuotaPercent * 10000);  // usec of CPU per second
    return std::nullopt;
}

std::optional<sdbus::Variant> tasksMax(const Resources& r) {
    if (r.pidsMax) return sdbus::Variant(*r.pidsMax);
    return std::nullopt;
}

std::optional<sdbus::Variant> allowedCpus(const Resources& r) {
    if (!r.allowedCpus.empty()) return sdbus::Variant(cpuMask(r.allowedCpus));
    return std::nullopt;
}

std::optional<sdbus::Variant> ioWeight(const Resources& r) {
    if (r.ioWeight) return sdbus::Variant(*r.ioWeight);
    return std::nullopt;
}

// IO{Read,Write}{Bandwidth,IOPS}Max= take a(st): (device path, per second).
Appender ioLimits(spec::IoDeviceLimits Resources::*member) {
    return [member](const Resources& r) -> std::optional<sdbus::Variant> {
        const auto& limits = r.*member;
        if (limits.empty()) return std::nullopt;
        std::vector<sdbus::Struct<std::string, uint64_t>> out;
        for (const auto& [path, rate] : limits) out.emplace_back(path, rate);
        return sdbus::Variant(out);
    };
}

// A slice's weight is already a weight: the sums below it, scaled among
// its siblings (scope/slice_weights.hpp), not shares to convert.
std::optional<sdbus::Variant> sliceCpuWeight(const SliceResources& s) {
    if (s.cpuWeight) return sdbus::Variant(*s.cpuWeight);
    return std::nullopt;
}

std::optional<sdbus::Variant> sliceAllowedCpus(const SliceResources& s) {
    if (s.allowedCpus) return sdbus::Variant(cpuMask(*s.allowedCpus));
    return std::nullopt;
}

/// A property, and how each kind of unit taskscope makes gets it (none: a
/// slice never carries it).
struct Row {
    const char* name;
    Appender task;
    SliceAppender slice;
};

const std::array<Row, 12> kTable{{
    {"MemoryMax", memoryMax, {}},
    {"MemoryLow", memoryLow, {}},
    {"MemorySwapMax", memorySwapMax, {}},
    {"CPUWeight", cpuWeight, sliceCpuWeight},
    {"CPUQuotaPerSecUSec", cpuQuota, {}},
    {"TasksMax", tasksMax, {}},
    {"AllowedCPUs", allowedCpus, sliceAllowedCpus},
    {"IOWeight", ioWeight, {}},
    {"IOReadBandwidthMax", ioLimits(&Resources::ioReadBps), {}},
    {"IOWriteBandwidthMax", ioLimits(&Resources::ioWriteBps), {}},
    {"IOReadIOPSMax", ioLimits(&Resources::ioReadIops), {}},
    {"IOWriteIOPSMax", ioLimits(&Resources::ioWriteIops), {}},
}};

}  // namespace

void addAccountingProperties(UnitProperties& p, bool cpu) {
    p.emplace_back("MemoryAccounting", sdbus::Variant(true));
    if (cpu) p.emplace_back("CPUAccounting", sdbus::Variant(true));
    p.emplace_back("TasksAccounting", sdbus::Variant(true));
}

uint64_t cpuWeightFromShares(uint64_t shares) {
    shares = std::clamp(shares, kCpuSharesMin, kCpuSharesMax);
    return 1 + ((shares - kCpuSharesMin) * 9999) / (kCpuSharesMax - kCpuSharesMin);
}

std::vector<uint8_t> cpuMask(const std::set<unsigned>& cpus) {
    std::vector<uint8_t> mask;
    for (unsigned cpu : cpus) {
        if (mask.size() <= cpu / 8) mask.resize(cpu / 8 + 1, 0);
        mask[cpu / 8] |= static_cast<uint8_t>(1u << (cpu % 8));
    }
    return mask;
}

UnitProperties resourceProperties(const Resources& resources) {
    UnitProperties out;
    for (const auto& row : kTable)
        if (auto value = row.task(resources)) out.emplace_back(row.name, std::move(*value));
    return out;
}

UnitProperties sliceProperties(const SliceResources& resources) {
    UnitProperties out;
    for (const auto& row : kTable)
        if (row.slice)
            if (auto value = row.slice(resources)) out.emplace_back(row.name, std::move(*value));
    return out;
}

void dropCpuWeight(UnitProperties& properties) {
    std::erase_if(properties, [](const UnitProperty& p) { return p.get<0>() == "CPUWeight"; });
}

}  // namespace taskscope::scope
