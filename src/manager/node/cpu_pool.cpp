// The cores handed to tasks, and the shared pool's moves when a
// reservation comes or goes (cpu_pool.hpp).
#include "manager/node/cpu_pool.hpp"

#include "common/cpu_list.hpp"
#include "common/error_names.hpp"

namespace taskscope::manager {

using common::makeError;
using common::Result;

CpuPool::CpuPool(std::set<unsigned> usable, const std::set<unsigned>& system, bool unified)
    : partitions_(std::move(usable), system), unified_(unified) {}

void CpuPool::join(const std::string& unit) {
    members_.emplace(unit, false);
}

size_t CpuPool::sharedTasks(const std::string& except) const {
    size_t n = 0;
    for (const auto& [unit, reserved] : members_)
        if (!reserved && unit != except) ++n;
    return n;
}

Result<CpuPool::Assignment> CpuPool::assign(const std::string& unit, const spec::Resources& resources) {
    join(unit);
    const unsigned cores = resources.cores.value_or(0) + static_cast<unsigned>(resources.cpuset.size());
    if (!unified_) {
        // systemd ignores AllowedCPUs on cgroup v1 (seen in the test bed),
        // so a reservation could not be kept: refuse it rather than lie.
        if (cores > 0)
            return makeError(common::errors::kNotSupported,
                             "resources.cores/cpuset: reserving cores needs cgroup v2; this node runs cgroup v1, "
                             "where systemd ignores AllowedCPUs");
        return Assignment{};
    }
    if (partitions_.usable().empty()) {
        if (cores > 0)
            return makeError(common::errors::kNotSupported, "resources.cores: no usable cpuset on this node");
        return Assignment{};
    }
    // The task asking is a member already, but not one of the shared tasks
    // its reservation must leave a core for.
    if (!resources.cpuset.empty() || cores > 0) {
        auto cpus = !resources.cpuset.empty() ? partitions_.reserveExact(unit, resources.cpuset, sharedTasks(unit))
                                              : partitions_.reserve(unit, cores, sharedTasks(unit));
        if (!cpus) return cpus.error();
        members_[unit] = true;
        return Assignment{std::move(*cpus), true};
    }
    auto pool = partitions_.sharedForNewTask();
    if (!pool) return pool.error();
    return Assignment{std::move(*pool), false};
}

Result<void> CpuPool::restore(const std::string& unit, const std::set<unsigned>& cpus) {
    // Its cores are its own whatever the partitions say: it runs on them,
    // and is none of the shared tasks.
    members_[unit] = true;
    return partitions_.restore(unit, cpus);
}

bool CpuPool::leave(const std::string& unit) {
    const auto it = members_.find(unit);
    if (it == members_.end()) return false;
    const bool reserved = it->second;
    members_.erase(it);
    if (reserved) partitions_.release(unit);
    return reserved;
}

std::optional<std::set<unsigned>> CpuPool::poolToApply() {
    if (!active() || recovering_) return std::nullopt;
    auto pool = partitions_.shared();
    if (pool.empty()) return std::nullopt;  // never written: v2 would read it as "every core"
    // Unchanged since the last pass: every shared task has it or has it
    // queued (a start that took an older pool catches up when it ends), so
    // a start at 10,000 tasks costs no walk over all of them.
    if (pool == applied_) return std::nullopt;
    applied_ = pool;
    return pool;
}

std::string CpuPool::sharedText() const {
    if (!unified_) return "";
    return common::formatCpuList(partitions_.shared());
}

}  // namespace taskscope::manager
