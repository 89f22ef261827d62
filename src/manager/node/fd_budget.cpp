// The descriptor budget's arithmetic (fd_budget.hpp): what a start may
// take against the manager's RLIMIT_NOFILE and its reserve.
#include "manager/node/fd_budget.hpp"

#include <dirent.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>

#include "common/error_names.hpp"
#include "common/files.hpp"

namespace taskscope::manager {

common::Result<FdUsage> fdUsage() {
    FdUsage u;
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) < 0) return common::errnoError("getrlimit RLIMIT_NOFILE", errno);
    u.limit = rl.rlim_cur == RLIM_INFINITY ? SIZE_MAX : static_cast<size_t>(rl.rlim_cur);
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir("/proc/self/fd"), &::closedir);
    if (!d) {
        // Out of descriptors already: no room for this directory either.
        if (errno == EMFILE || errno == ENFILE) {
            u.open = u.limit;
            return u;
        }
        return common::errnoError("open /proc/self/fd", errno);
    }
    while (auto* e = ::readdir(d.get()))
        if (e->d_name[0] != '.') ++u.open;
    --u.open;  // the directory's own descriptor
    return u;
}

common::Result<void> checkStartBudget(const FdUsage& u, size_t pendingStarts) {
    const size_t need = (pendingStarts + 1) * kFdsPerStart;
    if (u.limit >= need + kFdsReserved && u.open <= u.limit - need - kFdsReserved) return {};
    const std::string pending =
        pendingStarts ? " (and " + std::to_string(pendingStarts) + " starts on their way will open theirs)" : "";
    return common::makeError(common::errors::kResourceExhausted,
                             "the manager has " + std::to_string(u.open) + " of its " + std::to_string(u.limit) +
                                 " file descriptors (RLIMIT_NOFILE) open" + pending + "; a start needs " +
                                 std::to_string(kFdsPerStart) + " and " + std::to_string(kFdsReserved) +
                                 " stay reserved: raise LimitNOFILE= of taskscope-manager.service or start "
                                 "fewer tasks at once");
}

namespace {

// FDSize: slots in this process's descriptor table; every open one is below it.
size_t fdTableSize() {
    auto status = common::readFile("/proc/self/status");
    if (!status) return 0;
    const auto at = status->find("\nFDSize:");
    if (at == std::string::npos) return 0;
    return std::strtoull(status->c_str() + at + 8, nullptr, 10);
}

}  // namespace

common::Result<void> checkStartBudget(size_t pendingStarts) {
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) < 0) return common::errnoError("getrlimit RLIMIT_NOFILE", errno);
    const size_t table = fdTableSize();
    const size_t need = (pendingStarts + 1) * kFdsPerStart;
    if (table > 0 && (rl.rlim_cur == RLIM_INFINITY || table + need + kFdsReserved <= rl.rlim_cur)) return {};
    auto usage = fdUsage();
    if (!usage) return usage.error().context("count descriptors");
    return checkStartBudget(*usage, pendingStarts);
}

}  // namespace taskscope::manager
