// taskscopectl logs: a task's stdout or stderr from taskscope-streamer,
// followed (-f) across restarts of the streamer.
//
// A follow pipe ends (EOF) both when the log is complete and when the
// streamer that served it stopped: the streamer alone holds its write end.
// The two are told apart by that streamer's unique bus name: one that
// stopped has left the bus (or leaves it without answering a Ping). Then we
// wait for the name to be owned again (NameOwnerChanged; never a call that
// would start it through bus activation after an operator stopped it) and
// ask the new streamer for the log from the byte we reached: every byte we
// wrote out is counted, and what the task wrote meanwhile waited in its fifo.

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "client/proxies.hpp"
#include "common/sdbus_compat.hpp"

namespace taskscope::cli {

namespace {

constexpr const char* kStreamer = client::kStreamerName;
constexpr const char* kBus = "org.freedesktop.DBus";
constexpr const char* kBusPath = "/org/freedesktop/DBus";
constexpr const char* kOwnerMatch =
    "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
    "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.taskscope.Streamer1'";

using client::StreamerProxy;

/// Who owns org.taskscope.Streamer1, as the bus says.
class StreamerOwner {
public:
    explicit StreamerOwner(sdbus::IConnection& conn)
        : conn_(conn), bus_(sdbus::createProxy(conn, sdbus_compat::ServiceName{kBus}, sdbus::ObjectPath{kBusPath})) {
        // Subscribed before any question, so that no change slips by.
        match_ = sdbus_compat::addMatch(conn_, kOwnerMatch, [this](sdbus::Message& m) {
            std::string name, oldOwner, newOwner;
            m >> name >> oldOwner >> newOwner;
            latest_ = newOwner;
        });
        sdbus_compat::finishRegistration(*bus_);
    }

    /// The unique name owning it now; "" when nobody does.
    std::string now() {
        std::string owner;
        try {
            bus_->callMethod("GetNameOwner")
                .onInterface(kBus)
                .withArguments(std::string(kStreamer))
                .storeResultsTo(owner);
        } catch (const sdbus::Error& e) {
            if (e.getName() != "org.freedesktop.DBus.Error.NameHasNoOwner") throw;
        }
        latest_ = owner;
        return owner;
    }

    /// Whether the streamer `unique` is still on the bus. One that died
    /// may not have been noticed by the bus yet: it then gets our Ping and
    /// answers it with NoReply once its socket is closed.
    bool stillThere(const std::string& unique) {
        if (now() != unique) return false;
        try {
            auto peer = sdbus::createProxy(conn_, sdbus_compat::ServiceName{unique}, sdbus::ObjectPath{"/"});
            peer->callMethod("Ping").onInterface("org.freedesktop.DBus.Peer").withTimeout(std::chrono::seconds(60));
            return true;
        } catch (const sdbus::Error& e) {
            if (streamerGone(e)) return false;
            throw;
        }
    }

    /// Waits until a streamer other than `gone` owns the name.
    std::string awaitOtherThan(const std::string& gone) {
        if (const auto o = now(); !o.empty() && o != gone) return o;
        pumpUntil(conn_, [&] { return !latest_.empty() && latest_ != gone; });
        return latest_;
    }

private:
    sdbus::IConnection& conn_;
    std::unique_ptr<sdbus::IProxy> bus_;
    sdbus::Slot match_;
    std::string latest_;
};

struct Opened {
    sdbus::UnixFd fd;
    std::string servedBy;  ///< the unique name of the streamer that holds the pipe's write end
};

struct LogsArgs {
    std::string alloc, task, stream = "stdout";
    bool follow = false;
    long lines = -1;
};

// ReadLogs, knowing which streamer answered: the owner is asked before and
// after, and a pipe whose server is in doubt is asked for again (nothing
// was read from it, so nothing is lost or doubled). Only the first call may
// start the streamer through bus activation; later ones wait for it, so
// that an operator's `systemctl stop` is not undone by a reader.
Opened openFollow(StreamerProxy& streamer, StreamerOwner& owner, const LogsArgs& a, int64_t offset, bool mayActivate) {
    for (;;) {
        const auto before = owner.now();
        if (before.empty() && !mayActivate) {
            owner.awaitOtherThan("");
            continue;
        }
        sdbus::UnixFd fd;
        try {
            fd = streamer.ReadLogs(a.alloc, a.task, a.stream, "start", offset, true);
        } catch (const sdbus::Error& e) {
            if (!streamerGone(e)) throw;
            owner.awaitOtherThan(before);
            continue;
        }
        if (owner.now() == before) return Opened{std::move(fd), before};
    }
}

void writeOut(const char* data, size_t len) {
    writeAll(STDOUT_FILENO, data, len);
}

// Reads what arrives within `idleMs` of the last byte (all of it when -1):
// with -f -n, the backlog is what the streamer sends at once.
bool readBacklog(int fd, std::string& out, int idleMs) {
    char buf[65536];
    for (;;) {
        if (idleMs >= 0) {
            pollfd p{fd, POLLIN, 0};
            const int r = ::poll(&p, 1, idleMs);
            if (r == 0) return false;
            if (r < 0 && errno == EINTR) continue;
        }
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die(std::string("read logs: ") + std::strerror(errno));
        if (n == 0) return true;
        out.append(buf, static_cast<size_t>(n));
    }
}

// Copies fd to stdout until EOF; returns the bytes copied.
uint64_t copyOut(int fd) {
    char buf[65536];
    uint64_t total = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die(std::string("read logs: ") + std::strerror(errno));
        if (n == 0) return total;
        writeOut(buf, static_cast<size_t>(n));
        total += static_cast<uint64_t>(n);
    }
}

// The last n lines of text (a final line without a newline counts).
std::string lastLines(const std::string& text, long n) {
    if (n <= 0) return "";
    size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n') --pos;
    for (long seen = 0; pos > 0; --pos)
        if (text[pos - 1] == '\n' && ++seen == n) break;
    return text.substr(pos);
}

int readOnce(StreamerProxy& streamer, const LogsArgs& a) {
    // For -n: a generous span back from the end, trimmed to N lines here.
    const int64_t back = a.lines < 0 ? 0 : a.lines * 4096 + 65536;
    const auto fd = streamer.ReadLogs(a.alloc, a.task, a.stream, a.lines < 0 ? "start" : "end", back, false);
    if (a.lines >= 0) {
        std::string all;
        readBacklog(fd.get(), all, -1);
        const auto tail = lastLines(all, a.lines);
        writeOut(tail.data(), tail.size());
        return 0;
    }
    copyOut(fd.get());
    return 0;
}

int follow(sdbus::IConnection& conn, StreamerProxy& streamer, const LogsArgs& a) {
    StreamerOwner owner(conn);
    // Bytes from the log's start written out: where a new streamer resumes.
    // With -n too the read starts at the log's start, so that this count
    // is a position; the backlog is trimmed here.
    uint64_t reached = 0;
    bool backlogDone = a.lines < 0;
    bool first = true;
    for (;;) {
        const auto opened = openFollow(streamer, owner, a, static_cast<int64_t>(reached), first);
        first = false;
        const int in = opened.fd.get();
        bool eof = false;
        if (!backlogDone) {
            std::string backlog;
            eof = readBacklog(in, backlog, 100);
            const auto tail = lastLines(backlog, a.lines);
            writeOut(tail.data(), tail.size());
            reached += backlog.size();
            backlogDone = true;
        }
        if (!eof) reached += copyOut(in);
        if (owner.stillThere(opened.servedBy)) return 0;  // the log is complete
        std::fprintf(stderr, "taskscopectl: the streamer stopped; resuming at byte %llu when it is back\n",
                     static_cast<unsigned long long>(reached));
        owner.awaitOtherThan(opened.servedBy);
    }
}

}  // namespace

int logsCommand(sdbus::IConnection& conn, const std::vector<std::string>& args) {
    LogsArgs a;
    std::vector<std::string> positional;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "-f" || args[i] == "--follow") {
            a.follow = true;
        } else if ((args[i] == "-n" || args[i] == "--lines") && i + 1 < args.size()) {
            char* end = nullptr;
            a.lines = std::strtol(args[++i].c_str(), &end, 10);
            if (*end || a.lines < 0) die("-n takes a number of lines", 2);
        } else if (args[i] == "--stderr") {
            a.stream = "stderr";
        } else {
            positional.push_back(args[i]);
        }
    }
    if (positional.size() != 2) die("logs takes ALLOC TASK; see --help", 2);
    a.alloc = positional[0];
    a.task = positional[1];
    StreamerProxy streamer(conn);
    return a.follow ? follow(conn, streamer, a) : readOnce(streamer, a);
}

}  // namespace taskscope::cli
