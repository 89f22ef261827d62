// The split of the node's cores into reserved sets and the shared pool
// (cpu_partitions.hpp): pure arithmetic on core sets.
#include "manager/node/cpu_partitions.hpp"

#include <algorithm>
#include <iterator>

#include "common/cpu_list.hpp"
#include "common/error_names.hpp"

namespace taskscope::manager {

namespace {

using common::formatCpuList;
using common::makeError;

std::string describe(const std::set<unsigned>& cpus) { return cpus.empty() ? "none" : formatCpuList(cpus); }

}  // namespace

CpuPartitions::CpuPartitions(std::set<unsigned> usable, const std::set<unsigned>& system) : usable_(std::move(usable)) {
    for (unsigned cpu : system) usable_.erase(cpu);
}

std::set<unsigned> CpuPartitions::free() const {
    std::set<unsigned> out = usable_;
    for (const auto& [owner, cpus] : owners_)
        for (unsigned cpu : cpus) out.erase(cpu);
    return out;
}

std::set<unsigned> CpuPartitions::shared() const { return free(); }

common::Result<std::set<unsigned>> CpuPartitions::sharedForNewTask() const {
    auto pool = free();
    if (pool.empty())
        return makeError(common::errors::kInsufficientCores, "no shared cores left: all " + std::to_string(usable_.size()) +
                                                  " usable cores (" + describe(usable_) + ") are reserved");
    return pool;
}

common::Result<std::set<unsigned>> CpuPartitions::reserve(const std::string& owner, unsigned count,
                                                          size_t sharedTasks) {
    if (owners_.count(owner)) return makeError(common::errors::kInternal, owner + " already holds a reservation");
    if (count == 0) return makeError(common::errors::kInvalidSpec, "a reservation needs at least one core");
    const auto pool = free();
    if (count > pool.size())
        return makeError(common::errors::kInsufficientCores, "asked for " + std::to_string(count) + " cores, " +
                                                  std::to_string(pool.size()) + " free (" + describe(pool) +
                                                  ") of " + std::to_string(usable_.size()) + " usable");
    if (count == pool.size() && sharedTasks > 0)
        return makeError(common::errors::kInsufficientCores, "asked for " + std::to_string(count) + " cores, which would leave no core for " +
                                                  std::to_string(sharedTasks) + " running shared task(s); free: " +
                                                  describe(pool));
    std::set<unsigned> mine;
    std::copy_n(pool.begin(), count, std::inserter(mine, mine.end()));
    owners_[owner] = mine;
    return mine;
}

common::Result<std::set<unsigned>> CpuPartitions::reserveExact(const std::string& owner,
                                                               const std::set<unsigned>& cpus, size_t sharedTasks) {
    if (owners_.count(owner)) return makeError(common::errors::kInternal, owner + " already holds a reservation");
    const auto pool = free();
    for (unsigned cpu : cpus)
        if (!pool.count(cpu))
            return makeError(common::errors::kInsufficientCores, "asked for cores " + describe(cpus) + ", but core " +
                                                      std::to_string(cpu) + " is not free (free: " + describe(pool) +
                                                      ")");
    if (cpus.size() == pool.size() && sharedTasks > 0)
        return makeError(common::errors::kInsufficientCores, "asked for cores " + describe(cpus) + ", which would leave no core for " +
                                                  std::to_string(sharedTasks) + " running shared task(s)");
    owners_[owner] = cpus;
    return cpus;
}

common::Result<void> CpuPartitions::restore(const std::string& owner, const std::set<unsigned>& cpus) {
    const auto pool = free();
    for (unsigned cpu : cpus)
        if (!pool.count(cpu))
            return makeError(common::errors::kInsufficientCores, owner + " held core " + std::to_string(cpu) +
                                                      ", which is not free now (free: " + describe(pool) + ")");
    owners_[owner] = cpus;
    return {};
}

void CpuPartitions::release(const std::string& owner) { owners_.erase(owner); }

}  // namespace taskscope::manager
