#pragma once
// CPU weights of the slices above the tasks (issue 31), so that nesting
// changes nothing in how the CPU is shared: a slice weighs the sum of the
// CPU shares of the running tasks below it, and siblings keep the ratios of
// their sums. Shares are summed before any is mapped to a weight (issue
// 49): the map (cpuWeightFromShares) rounds, and is affine, not linear, so
// a sum of mapped weights set one task of 500 shares against three of
// 300+100+100 at 19:20; summed first, equal asks weigh equal.
//
// cgroup v2's cpu.weight only compares siblings and takes 1..10000, while a
// sum of task weights can be far larger. So each parent's children share
// one power-of-two scale: weight = round(sum * 2^shift), the shift chosen
// so that the heaviest child lands in (2500, 5000]. The shift changes (and
// every sibling is rewritten) only when the heaviest leaves (1250, 10000],
// so a start or an exit rewrites one sibling almost always, also when an
// allocation's second task doubles its sum. A child lighter than 1/5000 of
// the heaviest still gets 1: the kernel's range ends there.
//
// Where the children sit beside task scopes (an overflow slice beside its
// allocation's scopes) they must be in the scopes' own units: use
// unscaledWeight(), on a sum of the scopes' own weights. Pure: the caller applies the changes through systemd.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scope/cgroup_host.hpp"
#include "spec/resources.hpp"

namespace taskscope::scope {

inline constexpr uint64_t kCpuWeightMin = 1;
inline constexpr uint64_t kCpuWeightMax = 10000;
/// What a task without a CPU weight of its own weighs (the kernel's default).
inline constexpr uint64_t kCpuWeightDefault = 100;
using spec::kCpuSharesDefault;
using spec::kCpuSharesMax;
using spec::kCpuSharesMin;

/// What a task without CPU shares of its own weighs in a sum of shares:
/// the least shares whose weight is the kernel's default (2598, whose
/// weight is 100), so that a slice of such tasks weighs what their scopes do.
uint64_t sharesOfDefaultWeight();

/// A sum of task scopes' weights as a weight beside those scopes: clamped,
/// not scaled.
uint64_t unscaledWeight(uint64_t sum);

/// What cgroup v1's cpu.shares holds for a unit's CPUWeight: systemd
/// writes weight * 1024 / 100, clamped to 2..262144
/// (cgroup_cpu_weight_to_shares() in systemd's src/core/cgroup.c; the v1
/// system test checks it against the systemd it runs on).
uint64_t cpuSharesOfWeight(uint64_t weight);
/// The CPUWeight (1..10000) systemd wrote as `shares`, if one maps to it:
/// over that range the map above is one to one, so a slice's cpu.shares
/// says which weight it holds, as cpu.weight does on v2.
std::optional<uint64_t> cpuWeightOfShares(uint64_t shares);
/// The CPUWeight a unit's cgroup holds now, as the kernel has it: its
/// cpu.weight on v2, its cpu.shares mapped back on v1; nullopt when the
/// file cannot be read or holds no weight systemd writes. The one reader
/// of a cgroup's weight (recovery asks it of every allocation slice). It
/// reads cgroupfs, which waits behind the kernel's cgroup lock: a worker's.
std::optional<uint64_t> readCpuWeight(const CgroupHost& host, const std::string& cgroup);

class SiblingWeights {
public:
    struct Change {
        std::string child;
        uint64_t weight;
        bool operator==(const Change&) const = default;
    };

    /// Sets a child's sum (a child with sum 0 is dropped) and returns every
    /// child whose weight is now different from what was last returned for
    /// it (the child itself first, if it changed).
    std::vector<Change> set(const std::string& child, uint64_t sum);
    /// The weight a child has now (kCpuWeightDefault for one not known).
    uint64_t weightOf(const std::string& child) const;
    uint64_t sumOf(const std::string& child) const;
    /// The scale the children hold already, implied by one child's `sum`
    /// and the `weight` systemd holds for it (read back at a restart):
    /// kept while the heaviest fits it, so that a restart, or an upgrade
    /// from a manager with another band, rewrites no sibling.
    void keepScaleOf(uint64_t sum, uint64_t weight);
    int shift() const { return shift_; }
    size_t size() const { return sums_.size(); }

private:
    uint64_t scaled(uint64_t sum) const;
    bool shiftFits(uint64_t heaviest) const;
    static int shiftFor(uint64_t heaviest);

    std::map<std::string, uint64_t> sums_;
    std::map<std::string, uint64_t> weights_;  ///< as last returned
    int shift_ = 0;
};

}  // namespace taskscope::scope
