// The slices' CPU weights as sums of their tasks' (slice_weights.hpp).
#include "scope/slice_weights.hpp"

#include <algorithm>
#include <cmath>

#include "common/files.hpp"
#include "scope/cgroup_stats.hpp"
#include "scope/resources.hpp"

namespace taskscope::scope {

namespace {

// The heaviest child lands in (kTargetLow, kTargetHigh], and the scale moves
// only when it leaves (kRefitBelow, kCpuWeightMax]: a factor of two of room
// each way. So the commonest change at scale, an allocation's second task
// doubling its sum (or its stop halving it back), rewrites that one slice,
// not every sibling: with the heaviest in (5000, 10000], at 10,000 one-task
// allocations each second task moved the scale of a bucket of ~156 and
// the stop of a two-task allocation cost 17.5 cpu.max writes, not 1-2
// (bench/README.md, stop 49). Ratios hold to 1/1250 at worst.
constexpr uint64_t kTargetHigh = kCpuWeightMax / 2;
constexpr uint64_t kTargetLow = kCpuWeightMax / 4;
constexpr uint64_t kRefitBelow = kCpuWeightMax / 8;

}  // namespace

uint64_t sharesOfDefaultWeight() {
    // cpuWeightFromShares is monotonic: the first shares that reach the
    // default (computed, not written down, so that it follows the map).
    static const uint64_t shares = [] {
        uint64_t s = kCpuSharesMin;
        while (cpuWeightFromShares(s) < kCpuWeightDefault) ++s;
        return s;
    }();
    return shares;
}

uint64_t unscaledWeight(uint64_t sum) { return std::clamp(sum, kCpuWeightMin, kCpuWeightMax); }

uint64_t cpuSharesOfWeight(uint64_t weight) {
    return std::clamp(weight * kCpuSharesDefault / kCpuWeightDefault, kCpuSharesMin, kCpuSharesMax);
}

std::optional<uint64_t> readCpuWeight(const CgroupHost& host, const std::string& cgroup) {
    const bool v2 = host.unified();
    const auto file = host.file(cgroup, v2 ? "" : "cpu", v2 ? "cpu.weight" : "cpu.shares");
    if (!file) return std::nullopt;
    const auto text = common::readFile(*file);
    if (!text) return std::nullopt;
    auto weight = parseU64(*text);
    if (weight && !v2) weight = cpuWeightOfShares(*weight);
    if (!weight || !*weight) return std::nullopt;
    return weight;
}

std::optional<uint64_t> cpuWeightOfShares(uint64_t shares) {
    // The smallest weight whose shares reach `shares`; a value between two
    // weights' shares (not written by systemd for a weight) maps to none.
    const uint64_t weight = (shares * kCpuWeightDefault + kCpuSharesDefault - 1) / kCpuSharesDefault;
    if (weight < kCpuWeightMin || weight > kCpuWeightMax || cpuSharesOfWeight(weight) != shares) return std::nullopt;
    return weight;
}

uint64_t SiblingWeights::scaled(uint64_t sum) const {
    const long double w = std::ldexp(static_cast<long double>(sum), shift_);
    if (w >= static_cast<long double>(kCpuWeightMax)) return kCpuWeightMax;
    return std::max<uint64_t>(kCpuWeightMin, static_cast<uint64_t>(std::llround(w)));
}

int SiblingWeights::shiftFor(uint64_t heaviest) {
    // The shift that puts the heaviest in (kTargetLow, kTargetHigh].
    int shift = 0;
    long double w = static_cast<long double>(heaviest);
    while (w > kTargetHigh) {
        w /= 2;
        --shift;
    }
    while (w <= kTargetLow) {
        w *= 2;
        ++shift;
    }
    return shift;
}

bool SiblingWeights::shiftFits(uint64_t heaviest) const {
    const long double w = std::ldexp(static_cast<long double>(heaviest), shift_);
    return w <= kCpuWeightMax && w > kRefitBelow;
}

std::vector<SiblingWeights::Change> SiblingWeights::set(const std::string& child, uint64_t sum) {
    if (sum == 0) {
        sums_.erase(child);
        weights_.erase(child);
    } else {
        sums_[child] = sum;
    }
    std::vector<Change> changes;
    if (sums_.empty()) return changes;
    uint64_t heaviest = 0;
    for (const auto& [name, s] : sums_) heaviest = std::max(heaviest, s);
    if (!shiftFits(heaviest)) shift_ = shiftFor(heaviest);
    auto note = [&](const std::string& name, uint64_t s) {
        const uint64_t w = scaled(s);
        auto [it, added] = weights_.try_emplace(name, w);
        if (!added && it->second == w) return;
        it->second = w;
        changes.push_back({name, w});
    };
    if (sum) note(child, sum);
    for (const auto& [name, s] : sums_)
        if (name != child) note(name, s);
    return changes;
}

void SiblingWeights::keepScaleOf(uint64_t sum, uint64_t weight) {
    if (sum && weight) shift_ = int(std::lround(std::log2(double(weight) / double(sum))));
}

uint64_t SiblingWeights::weightOf(const std::string& child) const {
    auto it = weights_.find(child);
    return it == weights_.end() ? kCpuWeightDefault : it->second;
}

uint64_t SiblingWeights::sumOf(const std::string& child) const {
    auto it = sums_.find(child);
    return it == sums_.end() ? 0 : it->second;
}

}  // namespace taskscope::scope
