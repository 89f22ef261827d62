#include "common/fd_store.hpp"

#include <systemd/sd-daemon.h>

#include <cstdlib>

namespace taskscope::common {

Result<void> storeFd(int fd, const std::string& name) {
    const std::string msg = "FDSTORE=1\nFDNAME=" + name;
    const int r = sd_pid_notify_with_fds(0, 0, msg.c_str(), &fd, 1);
    if (r < 0) return errnoError("store fd " + name, -r);
    return {};
}

void unstoreFd(const std::string& name) {
    const std::string msg = "FDSTOREREMOVE=1\nFDNAME=" + name;
    (void)sd_notify(0, msg.c_str());
}

std::map<std::string, UniqueFd> takeStoredFds() {
    std::map<std::string, UniqueFd> out;
    char** names = nullptr;
    const int n = sd_listen_fds_with_names(1, &names);
    for (int i = 0; i < n; ++i) {
        UniqueFd fd(SD_LISTEN_FDS_START + i);
        const std::string name = names && names[i] ? names[i] : "";
        if (!out.count(name)) out.emplace(name, std::move(fd));
    }
    if (names) {
        for (int i = 0; i < n; ++i) std::free(names[i]);
        std::free(names);
    }
    return out;
}

}  // namespace taskscope::common
