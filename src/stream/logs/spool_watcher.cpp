#include "stream/logs/spool_watcher.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include "stream/logs/spool.hpp"

namespace taskscope::stream::logs {

common::Result<void> SpoolWatcher::start(const std::string& dir) {
    common::UniqueFd fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!fd) return common::errnoError("inotify_init1", errno);
    if (::inotify_add_watch(fd.get(), dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE) < 0)
        return common::errnoError("watch " + dir, errno);
    fd_ = std::move(fd);
    return {};
}

SpoolEvents SpoolWatcher::read() {
    SpoolEvents out;
    alignas(inotify_event) char buf[8192];
    for (;;) {
        const ssize_t n = ::read(fd_.get(), buf, sizeof buf);
        if (n <= 0) break;
        for (ssize_t off = 0; off < n;) {
            const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
            off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
            if (ev->mask & IN_Q_OVERFLOW) out.overflowed = true;
            if (ev->len == 0) continue;
            const auto unit = unitOfDescription(ev->name);
            if (!unit.empty()) out.events.push_back({unit, (ev->mask & IN_DELETE) != 0});
        }
    }
    return out;
}

}  // namespace taskscope::stream::logs
