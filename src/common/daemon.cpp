#include "common/daemon.hpp"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstring>
#include <sdbus-c++/sdbus-c++.h>

namespace taskscope::common {

std::unique_ptr<sdbus::IConnection> connectBus(const std::string& address) {
    if (address.empty()) return sdbus::createSystemBusConnection();
    return sdbus::createSessionBusConnectionWithAddress(address);
}

void quitOnTermination(EventLoop& loop, std::function<bool()> drainFirst) {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    // Lives as long as the process: the loop ends only when it fires.
    const int sfd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    loop.addFd(sfd, POLLIN, [&loop, sfd, drainFirst = std::move(drainFirst), seen = 0](short) mutable {
        signalfd_siginfo si;
        const char* name =
            ::read(sfd, &si, sizeof si) == sizeof si ? strsignal(static_cast<int>(si.ssi_signo)) : "a signal";
        if (seen++ == 0 && drainFirst && drainFirst()) {
            spdlog::info("Received {}, finishing the work under way before exiting", name);
            return;
        }
        spdlog::info("Received {}, exiting", name);
        loop.quit(0);
    });
}

}  // namespace taskscope::common
