// Filling a node: N tasks started with L requests in flight, for each level
// L, against a floor measured in the same run with the same concurrency.
//   floor      - bare systemd work any launcher needs, issued from one
//                process with L in flight: fork a child held before exec,
//                StartTransientUnit of a scope holding it, wait for its
//                JobRemoved, release it (it then sleeps). Floor and
//                taskscope take turns in chunks; the floor's chunk rates
//                are printed so its spread can be judged.
//   taskscope  - StartTask over the system bus with L in flight (each
//                reply comes once the task runs in its scope).
// While taskscope starts, a second connection reads (ListTasks, GetTask of
// one task) in a loop: p50/p99 against the same reads on an idle manager.
// Then every task is stopped (L in flight) and forgotten: stop-all time.
//
//   taskscope-bench-concurrency [N] [LEVELS] [--no-logs]
//   (defaults: 1000, "8,32,128"; logs collected unless --no-logs)
//
// --fork-bomb [N] [LEVEL] (defaults 100, 8): a task running a fork bomb
// (no pids_max of its own: the limit is what its scope gets by default,
// printed) while N other tasks start and then stop with LEVEL in flight;
// the reads' p50/p99/max (target: every read < 100 ms) against idle.
// The bomb has the memory a Nomad job gets when it names none (300 MB:
// resources.memory_mb) unless --bomb-memory-mb=M says otherwise (0: no
// memory limit, which no task from Nomad ever has).
//
// Independent of taskscope's own systemd client on purpose: the floor
// must not move when the client under test changes.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sdbus-c++/sdbus-c++.h>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/sdbus_compat.hpp"
#include "scope_floor.hpp"

namespace {

using bench::Clock;
using bench::Floor;
using bench::InFlight;
using bench::fanOut;
using bench::msSince;
constexpr const char* kTaskscope = "org.taskscope.Manager1";
constexpr const char* kTaskscopePath = "/org/taskscope/Manager1";
constexpr int kChunks = 5;  // turns of floor and taskscope per level
// A scheduler filling a node waits for its starts as long as systemd takes
// (the floor waits for every JobRemoved without a limit); sd-bus's 25 s
// default failed most starts at 128 in flight under emulation.
constexpr auto kCallTimeout = std::chrono::minutes(5);

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    auto i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

// The reads, and two floors taken in the same turns: `bus` is a round trip
// to dbus-daemon alone (GetId), what any call costs on this node at this
// moment; `ping` is Peer.Ping to the manager, answered by sd-bus inside the
// manager's loop without any handler of ours: the wait for the loop itself.
// A read's p99 above `ping`'s is the manager's handlers; `ping` above `bus`
// is the manager's loop busy with other work; `bus` is the node.
struct Reads {
    std::vector<double> list, get, ping, bus;
};

// Reads in a loop on its own connection until `stop`.
Reads readLoop(const std::atomic<bool>& stop, const std::string& alloc, const std::string& task) {
    auto bus = sdbus::createSystemBusConnection();
    auto m =
        sdbus::createProxy(*bus, taskscope::sdbus_compat::ServiceName{kTaskscope}, sdbus::ObjectPath{kTaskscopePath});
    auto daemon = sdbus::createProxy(*bus, taskscope::sdbus_compat::ServiceName{"org.freedesktop.DBus"},
                                     sdbus::ObjectPath{"/org/freedesktop/DBus"});
    Reads r;
    while (!stop) {
        auto t0 = Clock::now();
        try {
            m->callMethod("ListTasks").onInterface(kTaskscope);
            r.list.push_back(msSince(t0));
            t0 = Clock::now();
            m->callMethod("GetTask").onInterface(kTaskscope).withArguments(alloc, task);
            r.get.push_back(msSince(t0));
            t0 = Clock::now();
            m->callMethod("Ping").onInterface("org.freedesktop.DBus.Peer");
            r.ping.push_back(msSince(t0));
            t0 = Clock::now();
            daemon->callMethod("GetId").onInterface("org.freedesktop.DBus");
            r.bus.push_back(msSince(t0));
        } catch (const sdbus::Error& e) {
            std::fprintf(stderr, "read: %s\n", e.getMessage().c_str());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return r;
}

double maxOf(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

size_t over(const std::vector<double>& v, double ms) {
    return static_cast<size_t>(std::count_if(v.begin(), v.end(), [ms](double x) { return x > ms; }));
}

// Three seconds of reads against an otherwise idle manager.
Reads idleReads(const std::string& probeAlloc) {
    std::atomic<bool> stop{false};
    Reads idle;
    std::thread t([&] { idle = readLoop(stop, probeAlloc, "probe"); });
    std::this_thread::sleep_for(std::chrono::seconds(3));
    stop = true;
    t.join();
    return idle;
}

void printReads(const char* what, const Reads& r) {
    std::printf("  %s: ListTasks p50 %.1f p99 %.1f ms, GetTask p50 %.1f p99 %.1f ms (%zu reads)\n", what,
                percentile(r.list, 0.5), percentile(r.list, 0.99), percentile(r.get, 0.5), percentile(r.get, 0.99),
                r.list.size());
    std::printf("  %*s  floors: manager Ping p50 %.1f p99 %.1f ms, dbus-daemon GetId p50 %.1f p99 %.1f ms; "
                "GetTask p99 / Ping p99 %.2f, / GetId p99 %.2f\n",
                static_cast<int>(std::strlen(what)), "", percentile(r.ping, 0.5), percentile(r.ping, 0.99),
                percentile(r.bus, 0.5), percentile(r.bus, 0.99),
                percentile(r.get, 0.99) / std::max(percentile(r.ping, 0.99), 0.001),
                percentile(r.get, 0.99) / std::max(percentile(r.bus, 0.99), 0.001));
}

std::string systemctlShow(const std::string& property, const std::string& unit) {
    const std::string cmd = "systemctl show -P " + property + " " + unit + " 2>/dev/null";
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
        char buf[128];
        while (std::fgets(buf, sizeof buf, p)) out += buf;
        ::pclose(p);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

// A fork bomb in one task while n others start and stop: the reads of a
// second connection, every one of them, against the same reads idle.
int forkBomb(sdbus::IConnection& bus, sdbus::IProxy& manager, int n, int level, int memoryMb) {
    (void)bus;
    // Not the concurrency run's probe, which may still be recorded (exited).
    const std::string probeAlloc = "bench-bomb-probe";
    const std::string sleeper =
        nlohmann::json{{"command", "/bin/sleep"}, {"args", {"3600"}}, {"logs", true}, {"kill_timeout_ms", 0}}.dump();
    // The classic bomb in sh; its "Cannot fork" lines go nowhere (logs off)
    // so the bomb, not a full pipe, is what the node sees.
    nlohmann::json bombSpec{{"command", "/bin/sh"},
                            {"args", {"-c", "b() { b | b & }; b; sleep 3600"}},
                            {"logs", false},
                            {"kill_timeout_ms", 0}};
    if (memoryMb > 0) bombSpec["resources"] = {{"memory_mb", memoryMb}};
    const std::string bomb = bombSpec.dump();
    manager.callMethod("StartTask").onInterface(kTaskscope).withArguments(probeAlloc, "probe", sleeper);
    std::atomic<bool> stop{false};
    const Reads idle = idleReads(probeAlloc);
    const std::string bombUnit = "bench-bomb-bomb.scope";
    stop = false;
    Reads busy;
    std::thread reader([&] { busy = readLoop(stop, probeAlloc, "probe"); });
    auto t0 = Clock::now();
    manager.callMethod("StartTask").onInterface(kTaskscope).withArguments("bench-bomb", "bomb", bomb);
    const double bombStartMs = msSince(t0);
    std::this_thread::sleep_for(std::chrono::seconds(3));  // the bomb fills its scope
    const auto tasksMax = systemctlShow("TasksMax", bombUnit);
    const auto tasksNow = systemctlShow("TasksCurrent", bombUnit);

    const std::string alloc = "bench-fb";
    std::atomic<int> failed{0};
    const double startSecs = fanOut(n, level, [&](int i, auto done) {
        manager.callMethodAsync("StartTask")
            .onInterface(kTaskscope)
            .withArguments(alloc, "t" + std::to_string(i), sleeper)
            .withTimeout(kCallTimeout)
            .uponReplyInvoke([&, done](taskscope::sdbus_compat::ReplyError err, sdbus::ObjectPath) {
                if (err) ++failed;
                done();
            });
    });
    const double stopSecs = fanOut(n, level, [&](int i, auto done) {
        manager.callMethodAsync("StopTask")
            .onInterface(kTaskscope)
            .withArguments(alloc, "t" + std::to_string(i), std::string(), int64_t{0})
            .withTimeout(kCallTimeout)
            .uponReplyInvoke([done](taskscope::sdbus_compat::ReplyError) { done(); });
    });
    const auto tasksAfter = systemctlShow("TasksCurrent", bombUnit);
    stop = true;
    reader.join();

    // Clean up: the bomb, the tasks (once their exits are in), the probe.
    t0 = Clock::now();
    try {
        manager.callMethod("StopTask").onInterface(kTaskscope).withArguments("bench-bomb", "bomb", std::string(),
                                                                             int64_t{0});
    } catch (const sdbus::Error& e) {
        std::fprintf(stderr, "stop bomb: %s\n", e.getMessage().c_str());
    }
    double bombGoneMs = -1;
    for (int i = 0; i < 600; ++i) {
        const auto state = systemctlShow("ActiveState", bombUnit);
        if (state != "active" && state != "deactivating") {
            bombGoneMs = msSince(t0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (int round = 0; round < 100; ++round) {
        std::atomic<int> left{0};
        fanOut(n + 1, level, [&](int i, auto done) {
            const auto [a, t] = i < n ? std::make_pair(alloc, "t" + std::to_string(i))
                                      : std::make_pair(std::string("bench-bomb"), std::string("bomb"));
            manager.callMethodAsync("ForgetTask")
                .onInterface(kTaskscope)
                .withArguments(a, t)
                .uponReplyInvoke([&, done](taskscope::sdbus_compat::ReplyError err) {
                    if (err && err->getName() == "org.taskscope.Error.StillRunning") ++left;
                    done();
                });
        });
        if (!left) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    try {
        manager.callMethod("StopTask").onInterface(kTaskscope).withArguments(probeAlloc, "probe", std::string(),
                                                                              int64_t{0});
    } catch (const sdbus::Error&) {
    }

    std::printf("fork bomb beside %d starts and stops (%d in flight), bomb memory_mb %s:\n", n, level,
                memoryMb > 0 ? std::to_string(memoryMb).c_str() : "none");
    std::printf("  bomb scope %s: TasksMax %s, %s tasks 3 s after its start, %s after the stops; StartTask of the "
                "bomb %.0f ms, gone %.0f ms after its StopTask\n",
                bombUnit.c_str(), tasksMax.c_str(), tasksNow.c_str(), tasksAfter.c_str(), bombStartMs, bombGoneMs);
    std::printf("  %d starts in %.1f s (%d failed), %d stops in %.1f s\n", n, startSecs, failed.load(), n, stopSecs);
    printReads("reads idle     ", idle);
    printReads("reads with bomb", busy);
    std::printf("  reads with bomb: max ListTasks %.1f ms, GetTask %.1f ms; over 100 ms: %zu of %zu (target 0)\n",
                maxOf(busy.list), maxOf(busy.get), over(busy.list, 100) + over(busy.get, 100),
                busy.list.size() + busy.get.size());
    std::fflush(stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    int n = 1000;
    std::vector<int> levels{8, 32, 128};
    bool logs = true;
    bool bomb = false;
    int bombMemoryMb = 300;
    int pos = 0;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--bomb-memory-mb=", 0) == 0) {
            bombMemoryMb = std::atoi(a.c_str() + std::strlen("--bomb-memory-mb="));
        } else if (a == "--fork-bomb") {
            bomb = true;
            if (pos == 0) n = 100;
            if (levels.size() != 1) levels = {8};
        } else if (a == "--no-logs") {
            logs = false;
        } else if (pos == 0) {
            n = std::atoi(a.c_str());
            ++pos;
        } else {
            levels.clear();
            for (size_t s = 0; s <= a.size();) {
                auto e = a.find(',', s);
                if (e == std::string::npos) e = a.size();
                levels.push_back(std::atoi(a.substr(s, e - s).c_str()));
                s = e + 1;
            }
        }
    }
    if (n <= 0 || levels.empty()) {
        std::fprintf(stderr, "usage: %s [N] [LEVELS e.g. 8,32,128] [--no-logs] | --fork-bomb [N] [LEVEL] [--bomb-memory-mb=M]\n", argv[0]);
        return 2;
    }
    ::signal(SIGPIPE, SIG_IGN);

    auto bus = sdbus::createSystemBusConnection();
    Floor floor(*bus);
    auto manager =
        sdbus::createProxy(*bus, taskscope::sdbus_compat::ServiceName{kTaskscope}, sdbus::ObjectPath{kTaskscopePath});
    bus->enterEventLoopAsync();
    if (bomb) {
        const int rc = forkBomb(*bus, *manager, n, levels.front(), bombMemoryMb);
        bus->leaveEventLoop();
        return rc;
    }

    const std::string probeAlloc = "bench-probe";
    const std::string spec =
        nlohmann::json{{"command", "/bin/sleep"}, {"args", {"3600"}}, {"logs", logs}, {"kill_timeout_ms", 0}}.dump();
    manager->callMethod("StartTask").onInterface(kTaskscope).withArguments(probeAlloc, "probe", spec);

    std::printf("start concurrency: %d tasks per level, logs %s\n", n, logs ? "on" : "off");
    for (int level : levels) {
        const auto tag = std::to_string(level);
        // Idle reads: the manager holds only the probe task.
        std::atomic<bool> stop{false};
        const Reads idle = idleReads(probeAlloc);

        // Floor and taskscope take turns, a chunk of starts each, so that
        // drift (the host busy or not, systemd's own state) hits both alike;
        // each keeps its units until the level ends, so both run beside as
        // many scopes. The spread of the floor's chunk rates is printed.
        const int chunks = std::max(1, std::min(kChunks, n / (2 * level)));
        const std::string alloc = "bench-c" + tag;
        std::atomic<int> failed{0};
        std::string firstError;
        std::mutex errMutex;
        double floorSecs = 0, startSecs = 0;
        std::vector<double> floorRates, taskRates;
        Reads busy;
        for (int c = 0; c < chunks; ++c) {
            const int from = n * c / chunks, to = n * (c + 1) / chunks;
            const double fs = floor.secondsToStart(tag + "-" + std::to_string(c), to - from, level);
            floorRates.push_back((to - from) / fs);
            floorSecs += fs;

            stop = false;
            Reads chunkReads;
            std::thread reader([&] { chunkReads = readLoop(stop, probeAlloc, "probe"); });
            const double ts = fanOut(to - from, level, [&](int i, auto done) {
                manager->callMethodAsync("StartTask")
                    .onInterface(kTaskscope)
                    .withArguments(alloc, "t" + std::to_string(from + i), spec)
                    .withTimeout(kCallTimeout)
                    .uponReplyInvoke([&, done](taskscope::sdbus_compat::ReplyError err, sdbus::ObjectPath) {
                        if (err && failed++ == 0) {
                            std::lock_guard lock(errMutex);
                            firstError = err->getName() + ": " + err->getMessage();
                        }
                        done();
                    });
            });
            stop = true;
            reader.join();
            busy.list.insert(busy.list.end(), chunkReads.list.begin(), chunkReads.list.end());
            busy.get.insert(busy.get.end(), chunkReads.get.begin(), chunkReads.get.end());
            busy.ping.insert(busy.ping.end(), chunkReads.ping.begin(), chunkReads.ping.end());
            busy.bus.insert(busy.bus.end(), chunkReads.bus.begin(), chunkReads.bus.end());
            taskRates.push_back((to - from) / ts);
            startSecs += ts;
        }
        floor.clear();

        const double stopSecs = fanOut(n, level, [&](int i, auto done) {
            manager->callMethodAsync("StopTask")
                .onInterface(kTaskscope)
                .withArguments(alloc, "t" + std::to_string(i), std::string(), int64_t{0})
                .withTimeout(kCallTimeout)
                .uponReplyInvoke([done](taskscope::sdbus_compat::ReplyError) { done(); });
        });
        // Forget once every exit has arrived (the exit follows the stop's reply).
        int left = n;
        for (int round = 0; left > 0 && round < 600; ++round) {
            std::atomic<int> notYet{0};
            fanOut(n, level, [&](int i, auto done) {
                manager->callMethodAsync("ForgetTask")
                    .onInterface(kTaskscope)
                    .withArguments(alloc, "t" + std::to_string(i))
                    .uponReplyInvoke([&, done](taskscope::sdbus_compat::ReplyError err) {
                        if (err && err->getName() == "org.taskscope.Error.StillRunning") ++notYet;
                        done();
                    });
            });
            left = notYet;
            if (left) std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }

        const double floorRate = n / floorSecs;
        const double rate = (n - failed) / startSecs;
        auto range = [](const std::vector<double>& v) {
            return std::make_pair(*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
        };
        const auto [fmin, fmax] = range(floorRates);
        const auto [tmin, tmax] = range(taskRates);
        std::printf("level %d in flight (%d chunks of each, taking turns):\n", level, chunks);
        std::printf("  floor (bare StartTransientUnit + held child): %.1f starts/s (chunks %.1f..%.1f)\n", floorRate,
                    fmin, fmax);
        std::printf("  taskscope StartTask: %.1f starts/s (chunks %.1f..%.1f), %d of %d failed%s%s\n", rate, tmin,
                    tmax, failed.load(), n, failed ? "; first: " : "", failed ? firstError.c_str() : "");
        std::printf("  ratio taskscope/floor: %.2f (target >= 0.5)\n", rate / floorRate);
        printReads("reads idle    ", idle);
        printReads("reads starting", busy);
        std::printf("  stop-all of %d: %.1f s (%d not forgotten)\n", n, stopSecs, left);
        std::fflush(stdout);
    }
    try {
        manager->callMethod("StopTask").onInterface(kTaskscope).withArguments(probeAlloc, "probe", std::string(),
                                                                              int64_t{0});
    } catch (const sdbus::Error&) {
    }
    bus->leaveEventLoop();
    return 0;
}
