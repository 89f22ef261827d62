// The plugin's hclog log channel on stderr (plugin_log.hpp).
#include "nomad/plugin_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cerrno>
#include <mutex>
#include <nlohmann/json.hpp>

namespace taskscope::nomad {

namespace {

enum class Channel { Stderr, Journal, Null };
std::atomic<Channel> gChannel{Channel::Stderr};
std::mutex gMoveMu;

// Points fd 2 somewhere that takes writes: the journal, else /dev/null.
void moveStderr() {
    std::lock_guard lock(gMoveMu);
    if (gChannel != Channel::Stderr) return;  // another thread moved it already
    int fd = ::sd_journal_stream_fd("nomad-driver-taskscope", LOG_INFO, 0);
    Channel to = Channel::Journal;
    if (fd < 0) {
        fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        to = Channel::Null;
    }
    if (fd < 0) return;
    ::dup2(fd, 2);
    ::close(fd);
    gChannel = to;
}

std::string nowStamp() {
    timespec wall{};
    ::clock_gettime(CLOCK_REALTIME, &wall);
    tm t{};
    ::gmtime_r(&wall.tv_sec, &t);
    char stamp[40];
    const size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &t);
    std::snprintf(stamp + n, sizeof stamp - n, ".%06ldZ", wall.tv_nsec / 1000);
    return stamp;
}

}  // namespace

void prepareLogChannel() {
    struct stat st {};
    if (::fstat(2, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
    const int flags = ::fcntl(2, F_GETFL);
    if (flags >= 0) ::fcntl(2, F_SETFL, flags | O_NONBLOCK);
}

void writeLogRecord(std::string_view line) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        ssize_t n;
        do n = ::write(2, line.data(), line.size());
        while (n < 0 && errno == EINTR);
        if (n >= 0 || errno == EAGAIN) return;  // written, or dropped: the reader is behind
        if (gChannel != Channel::Stderr) return;
        moveStderr();
    }
}

void logRecord(const char* level, const std::string& message,
               const std::vector<std::pair<std::string, std::string>>& fields) {
    nlohmann::json line = {{"@level", level},
                           {"@message", message},
                           {"@module", "taskscope"},
                           {"@timestamp", nowStamp()}};
    for (const auto& [k, v] : fields) line[k] = v;
    writeLogRecord(line.dump() + "\n");
}

std::string logChannel() {
    switch (gChannel.load()) {
        case Channel::Journal: return "journal";
        case Channel::Null: return "null";
        default: return "stderr";
    }
}

}  // namespace taskscope::nomad
