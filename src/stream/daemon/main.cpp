// taskscope-streamer: moves tasks' stdout and stderr from the manager's
// fifos into rotated log files and serves org.taskscope.Streamer1.

#include <getopt.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <sdbus-c++/sdbus-c++.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "common/daemon.hpp"
#include "common/event_loop.hpp"
#include "common/fd_store.hpp"
#include "common/log.hpp"
#include "common/sdbus_compat.hpp"
#include "stream/daemon/exec_adaptor.hpp"
#include "stream/daemon/log_retention.hpp"
#include "stream/daemon/stats_service.hpp"
#include "stream/daemon/streamer_adaptor.hpp"
#include "stream/logs/streamer.hpp"

#ifndef TASKSCOPE_VERSION
#define TASKSCOPE_VERSION "0.0.0"
#endif

namespace {

using namespace taskscope;

constexpr const char* kBusName = "org.taskscope.Streamer1";

struct Options {
    bool verbose = false;
    std::string busAddress;  // empty: the system bus
    stream::logs::StreamerOptions streamer;
    stream::daemon::StatsServiceOptions stats;
    stream::exec::ExecServiceOptions exec;
};

void usage(FILE* out) {
    std::fprintf(out,
                 "Usage: taskscope-streamer [OPTIONS]\n"
                 "Collects task logs into rotated files; serves %s on the system bus.\n\n"
                 "      --bus-address ADDR  serve on this bus instead of the system bus (tests)\n"
                 "      --spool-dir DIR     the manager's log spool (default /run/taskscope/logs)\n"
                 "      --state-dir DIR     records of completed logs (default /var/lib/taskscope-streamer)\n"
                 "      --journal-socket PATH  journald's stream socket, for tasks with log_journal\n"
                 "                          (default /run/systemd/journal/stdout)\n"
                 "      --stats-interval-ms MS  default stats interval (default 1000; 0: none)\n"
                 "      --max-exec-sessions N  exec sessions at once (default 64)\n"
                 "      --shim PATH         taskscope-shim, which sets exec'd commands up (default %s)\n"
                 "  -v, --verbose           debug logging\n"
                 "  -h, --help              this help\n",
                 kBusName, TASKSCOPE_SHIM_DEFAULT);
}

bool parseOptions(int argc, char** argv, Options& o) {
    enum { kBus = 256, kSpool, kState, kStatsInterval, kMaxExec, kShim, kJournalSocket };
    static const option longOpts[] = {
        {"bus-address", required_argument, nullptr, kBus},
        {"spool-dir", required_argument, nullptr, kSpool},
        {"state-dir", required_argument, nullptr, kState},
        {"stats-interval-ms", required_argument, nullptr, kStatsInterval},
        {"max-exec-sessions", required_argument, nullptr, kMaxExec},
        {"shim", required_argument, nullptr, kShim},
        {"journal-socket", required_argument, nullptr, kJournalSocket},
        {"verbose", no_argument, nullptr, 'v'},
        {"help", no_argument, nullptr, 'h'},
        {nullptr, 0, nullptr, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "vh", longOpts, nullptr)) != -1) {
        switch (c) {
            case kBus:
                o.busAddress = optarg;
                break;
            case kSpool:
                o.streamer.spoolDir = optarg;
                break;
            case kState:
                o.streamer.stateDir = optarg;
                break;
            case kStatsInterval: {
                char* end = nullptr;
                errno = 0;
                o.stats.defaultIntervalMs = std::strtoull(optarg, &end, 10);
                if (errno || *end || !*optarg || *optarg == '-') {
                    std::fprintf(stderr, "taskscope-streamer: --stats-interval-ms takes milliseconds\n");
                    return false;
                }
                break;
            }
            case kMaxExec: {
                char* end = nullptr;
                o.exec.maxSessions = std::strtoul(optarg, &end, 10);
                if (*end || o.exec.maxSessions == 0) {
                    std::fprintf(stderr, "--max-exec-sessions takes a positive number\n");
                    return false;
                }
                break;
            }
            case kShim:
                o.exec.shimPath = optarg;
                break;
            case kJournalSocket:
                o.streamer.journalSocket = optarg;
                break;
            case 'v':
                o.verbose = true;
                break;
            case 'h':
                usage(stdout);
                std::exit(0);
            default:
                usage(stderr);
                return false;
        }
    }
    return true;
}

int run(const Options& opts) {
    // A reader that goes away must not kill us: writes to its pipe fail with EPIPE.
    ::signal(SIGPIPE, SIG_IGN);
    common::EventLoop loop;
    common::quitOnTermination(loop);

    auto bus = common::connectBus(opts.busAddress);
    // Take the stored fds first: whatever happens next, they are ours to
    // close. The exec sessions' go to the exec service, the rest are logs.
    auto logFds = common::takeStoredFds();
    std::map<std::string, common::UniqueFd> execFds;
    for (auto it = logFds.begin(); it != logFds.end();) {
        uint64_t session = 0;
        if (stream::exec::parseExecFdName(it->first, session)) {
            execFds.insert(logFds.extract(it++));
        } else {
            ++it;
        }
    }
    stream::logs::Streamer streamer(loop, opts.streamer);
    if (auto r = streamer.start(std::move(logFds)); !r) {
        spdlog::error("Failed to start: {}", r.error().message);
        return 1;
    }
    stream::daemon::ManagerClient manager(*bus);
    stream::daemon::StreamerObject object(*bus, streamer, manager, TASKSCOPE_VERSION);
    streamer.attach(object);
    // One watch on the manager serves both: stats learn the running tasks,
    // the logs the forgotten ones.
    stream::daemon::LogRetention retention(streamer);
    auto stats = stream::daemon::StatsService::create(loop, *bus, manager, stream::daemon::kStreamerPath, opts.stats,
                                                      opts.streamer.stateDir);
    if (!stats) {
        spdlog::error("Failed to start stats: {}", stats.error().message);
        return 1;
    }
    (*stats)->start(&retention);
    auto execOptions = opts.exec;
    execOptions.recordDir = opts.streamer.stateDir + "/exec";
    stream::daemon::ExecServer exec(loop, *bus, manager, execOptions);
    exec.restore(std::move(execFds));
    loop.addBus(*bus);
    // The name last: a caller activated by it finds the object and every task.
    bus->requestName(sdbus_compat::ServiceName{kBusName});
    spdlog::info("taskscope-streamer {} ready: {} tasks, spool {}", TASKSCOPE_VERSION, streamer.taskCount(),
                 opts.streamer.spoolDir);
    return loop.run();
}

}  // namespace

int main(int argc, char** argv) {
    Options opts;
    if (!parseOptions(argc, argv, opts)) return 2;
    common::setupLogging("taskscope-streamer", opts.verbose);
    try {
        return run(opts);
    } catch (const sdbus::Error& e) {
        // No catch-and-continue: systemd restarts us; the fd store keeps the fifos.
        spdlog::critical("D-Bus failure: {}: {}", e.getName(), e.getMessage());
        return 1;
    }
}
