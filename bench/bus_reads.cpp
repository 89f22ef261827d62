// Reads of taskscope against reads of the bus itself, sampled while
// something else loads the node (bench/fork_bomb.sh): every PERIOD_MS one
// Manager1.GetTask (ALLOC/TASK; NoSuchTask answers count as answers), one
// org.freedesktop.DBus.Peer.Ping of the manager and one
// org.freedesktop.DBus.GetId, each timed call to reply on its own
// connection, the three in turn. Runs until SIGTERM or SECONDS pass, then
// prints the count, median, p95, p99 and max of each and the ratio of the
// p99s (the bus's own read is the floor: taskscope cannot answer faster
// than the bus carries its answer). The Ping takes the GetTask's path
// through dbus-daemon to the manager's process and back, but sd-bus
// answers it in the manager's loop before any handler of ours: where
// GetTask's tail is also Ping's, the time is spent getting the message to
// and from the manager, not in answering it.
//   taskscope-bench-reads ALLOC TASK [PERIOD_MS] [SECONDS]

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <thread>
#include <vector>

#include "common/sdbus_compat.hpp"

namespace {

using Clock = std::chrono::steady_clock;
std::atomic<bool> gStop{false};

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// One call, timed to its reply (an error reply is a reply); -1: none
// within the bus's timeout.
template <typename F>
double timed(F&& call) {
    const auto t0 = Clock::now();
    try {
        call();
    } catch (const sdbus::Error& e) {
        if (e.getName() == "org.freedesktop.DBus.Error.NoReply" || e.getName() == "org.freedesktop.DBus.Error.Timeout")
            return -1;
    }
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void report(const char* what, const std::vector<double>& v, int unanswered) {
    std::printf("%s: %zu answered, %d unanswered, median %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms\n", what,
                v.size(), unanswered, quantile(v, 0.5), quantile(v, 0.95), quantile(v, 0.99),
                v.empty() ? 0 : *std::max_element(v.begin(), v.end()));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s ALLOC TASK [PERIOD_MS] [SECONDS]\n", argv[0]);
        return 2;
    }
    const std::string alloc = argv[1], task = argv[2];
    const int periodMs = argc > 3 ? std::atoi(argv[3]) : 200;
    const int seconds = argc > 4 ? std::atoi(argv[4]) : 3600;
    ::signal(SIGTERM, [](int) { gStop = true; });
    ::signal(SIGINT, [](int) { gStop = true; });
    auto taskscopeConn = sdbus::createSystemBusConnection();
    auto pingConn = sdbus::createSystemBusConnection();
    auto busConn = sdbus::createSystemBusConnection();
    auto mgr = sdbus::createProxy(*taskscopeConn, taskscope::sdbus_compat::ServiceName{"org.taskscope.Manager1"},
                                  sdbus::ObjectPath{"/org/taskscope/Manager1"});
    auto ping = sdbus::createProxy(*pingConn, taskscope::sdbus_compat::ServiceName{"org.taskscope.Manager1"},
                                   sdbus::ObjectPath{"/org/taskscope/Manager1"});
    auto bus = sdbus::createProxy(*busConn, taskscope::sdbus_compat::ServiceName{"org.freedesktop.DBus"},
                                  sdbus::ObjectPath{"/org/freedesktop/DBus"});
    std::vector<double> ts, pings, floor;
    int tsLost = 0, pingLost = 0, floorLost = 0;
    const auto end = Clock::now() + std::chrono::seconds(seconds);
    while (!gStop && Clock::now() < end) {
        const auto next = Clock::now() + std::chrono::milliseconds(periodMs);
        const double a = timed([&] {
            std::string json;
            mgr->callMethod("GetTask").onInterface("org.taskscope.Manager1").withArguments(alloc, task).storeResultsTo(json);
        });
        const double p = timed([&] { ping->callMethod("Ping").onInterface("org.freedesktop.DBus.Peer"); });
        const double b = timed([&] {
            std::string id;
            bus->callMethod("GetId").onInterface("org.freedesktop.DBus").storeResultsTo(id);
        });
        if (a < 0) ++tsLost; else ts.push_back(a);
        if (p < 0) ++pingLost; else pings.push_back(p);
        if (b < 0) ++floorLost; else floor.push_back(b);
        std::this_thread::sleep_until(next);
    }
    report("taskscope GetTask", ts, tsLost);
    report("manager Peer.Ping", pings, pingLost);
    report("bus GetId (floor)", floor, floorLost);
    const double f = quantile(floor, 0.99);
    std::printf("read p99 ratio (taskscope / bus): %.2f\n", f > 0 ? quantile(ts, 0.99) / f : 0.0);
    return 0;
}
