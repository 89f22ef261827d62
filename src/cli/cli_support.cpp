#include "cli/cli.hpp"
#include "common/sdbus_compat.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace taskscope::cli {

void die(const std::string& message, int code) {
    std::fprintf(stderr, "taskscopectl: %s\n", message.c_str());
    std::exit(code);
}

std::unique_ptr<sdbus::IConnection> connect() {
    if (const char* a = std::getenv("TASKSCOPE_BUS_ADDRESS"); a && *a)
        return sdbus::createSessionBusConnectionWithAddress(a);
    return sdbus::createSystemBusConnection();
}

bool streamerGone(const sdbus::Error& e) {
    const auto& n = e.getName();
    return n == "org.freedesktop.DBus.Error.ServiceUnknown" || n == "org.freedesktop.DBus.Error.NameHasNoOwner" ||
           n == "org.freedesktop.DBus.Error.NoReply" || n == "org.freedesktop.DBus.Error.Disconnected";
}

void writeAll(int fd, const char* data, size_t len) {
    while (len > 0) {
        const ssize_t n = ::write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            // The reader went away (`| head`): end as SIGPIPE would, quietly.
            if (errno == EPIPE) std::_Exit(128 + SIGPIPE);
            die(std::string("write: ") + std::strerror(errno));
        }
        data += n;
        len -= static_cast<size_t>(n);
    }
}

void pumpUntil(sdbus::IConnection& conn, const std::function<bool()>& done) {
    while (!done()) {
        if (sdbus_compat::processPending(conn)) continue;
        // Until the bus's own deadline at most: a call's timeout fires from here.
        if (sdbus_compat::pollBus(conn) < 0 && errno != EINTR) die(std::string("poll: ") + std::strerror(errno));
    }
}

}  // namespace taskscope::cli
