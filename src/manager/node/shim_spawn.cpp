// posix_spawn of taskscope-shim with a clean signal state (shim_spawn.hpp).
#include "manager/node/shim_spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include "common/error_names.hpp"

namespace taskscope::manager {

common::Result<pid_t> spawnShimProcess(const std::string& path, char* const argv[], char* const envp[],
                                       const std::vector<std::pair<int, int>>& dup2s) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    for (const auto& [from, to] : dup2s) posix_spawn_file_actions_adddup2(&fa, from, to);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    // The shim starts with default signal handling and an empty mask,
    // whatever the manager has blocked for its signalfd.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    const int err = ::posix_spawn(&pid, path.c_str(), &fa, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (err != 0) return common::errnoError("spawn " + path, err);
    return pid;
}

}  // namespace taskscope::manager
