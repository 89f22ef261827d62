// The calls of bench/node_fill.sh that must not be timed through busctl: a
// busctl process per call costs more than the call itself in the guest, so
// a node filled through it measures busctl. One process, one connection,
// P calls in flight.
//
//   taskscope-bench-fill start N P        start fill<i/100>/t<i%100>, i < N
//   taskscope-bench-fill stop N P         stop and forget them
//   taskscope-bench-fill reads            ListTasks and GetManagedObjects:
//                                         median of 5 and reply size
//   taskscope-bench-fill wait-running N S until ListTasks counts N running
//                                         (a manager that restarts may not
//                                         answer for a while), S seconds max
//   taskscope-bench-fill drain N P        a node drain, as Nomad's is: every
//                                         task stopped (SIGTERM, 5 s grace),
//                                         each forgotten once it exited;
//                                         meanwhile every 2 s one new task
//                                         (an allocation of its own) is
//                                         started and its StartTask timed;
//                                         then the time until systemd has
//                                         no scope of them left
//   taskscope-bench-fill burst N DIR PREFIX
//                                         N StartTask calls at once, in
//                                         allocations PREFIX-1..N (task t),
//                                         each task's first instruction
//                                         touching DIR/out/<i>; per start
//                                         DIR/ms/<i> (ms to its answer),
//                                         DIR/rc/<i> (0, or 1 with the
//                                         error in DIR/rc/<i>.out): the
//                                         starts of fork_bomb.sh, sent by
//                                         one process, so that under the
//                                         bomb no fork of the bench's own
//                                         is timed with them
// BENCH_FILL_PER_ALLOC (default 100): tasks per allocation; 1 for the
// worst drain, where each forget also removes its allocation's slice.
// BENCH_FILL_FROM (default 0): the first index `start` starts (a fill in steps).
// BENCH_FILL_CPU_SHARES: the cpu_shares each task `start` starts asks.
// Each prints one line (and each error name once, counted); the exit
// status is 0 unless a call failed.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/sdbus_compat.hpp"
#include "pid1_cpu.hpp"
#include "scope_floor.hpp"

namespace {

using bench::Clock;
using bench::InFlight;
using bench::fanOut;
using bench::msSince;
constexpr const char* kManager = "org.taskscope.Manager1";
constexpr const char* kManagerPath = "/org/taskscope/Manager1";
// A scheduler filling a node waits for its starts longer than sd-bus's
// default 25 s: with many in flight on a slow guest, a start's answer can
// take that long while every task does start.
constexpr auto kCallTimeout = std::chrono::minutes(5);

int perAlloc() {
    static const int n = [] {
        const char* v = std::getenv("BENCH_FILL_PER_ALLOC");
        return v && std::atoi(v) > 0 ? std::atoi(v) : 100;
    }();
    return n;
}
/// BENCH_FILL_CPU_SHARES (default none): each started task's cpu_shares,
/// as Nomad's `cpu` sets it (100 by default there).
int cpuShares() {
    static const int n = [] {
        const char* v = std::getenv("BENCH_FILL_CPU_SHARES");
        return v && std::atoi(v) > 0 ? std::atoi(v) : 0;
    }();
    return n;
}
/// BENCH_FILL_FROM (default 0): `start` starts indices FROM..FROM+N-1, so
/// that a fill can go on in steps, each timed on its own.
int fillFrom() {
    static const int n = [] {
        const char* v = std::getenv("BENCH_FILL_FROM");
        return v && std::atoi(v) > 0 ? std::atoi(v) : 0;
    }();
    return n;
}
std::string allocOf(int i) { return "fill" + std::to_string(i / perAlloc()); }
std::string taskOf(int i) { return "t" + std::to_string(i % perAlloc()); }

// Counts errors by name, keeping one message of each.
struct Errors {
    std::mutex m;
    std::map<std::string, std::pair<int, std::string>> byName;
    int total = 0;
    void add(const sdbus::Error& e) {
        std::lock_guard lock(m);
        auto& [count, text] = byName[e.getName()];
        if (count++ == 0) text = e.getMessage();
        ++total;
    }
    void print() {
        for (const auto& [name, v] : byName) std::printf("  %d x %s: %s\n", v.first, name.c_str(), v.second.c_str());
    }
};

// Every 1000th answer: how fast that thousand came, so a rate that falls
// as the node fills shows where, not only in the total.
struct Progress {
    std::mutex m;
    int answered = 0;
    Clock::time_point t0 = Clock::now(), last = t0;
    void tick() {
        std::lock_guard lock(m);
        if (++answered % 1000) return;
        const auto now = Clock::now();
        std::printf("  %d answered at %.0f s (%.1f/s for the last 1000)\n", answered,
                    std::chrono::duration<double>(now - t0).count(),
                    1000.0 / std::chrono::duration<double>(now - last).count());
        std::fflush(stdout);
        last = now;
    }
};

int start(sdbus::IProxy& m, int n, int level) {
    Errors errors;
    Progress progress;
    const double ms = 1000.0 * fanOut(n, level, [&](int k, auto done) {
        const int i = fillFrom() + k;
        // The task writes one line, then sleeps: its log proves the spool.
        nlohmann::json j{{"command", "/bin/sh"},
                         {"args", {"-c", "echo up $0; exec sleep infinity", taskOf(i)}},
                         {"kill_timeout_ms", 0}};
        if (cpuShares() > 0) j["resources"]["cpu_shares"] = cpuShares();
        const std::string spec = j.dump();
        m.callMethodAsync("StartTask")
            .onInterface(kManager)
            .withTimeout(kCallTimeout)
            .withArguments(allocOf(i), taskOf(i), spec)
            .uponReplyInvoke([&, done](taskscope::sdbus_compat::ReplyError err, sdbus::ObjectPath) {
                if (err) errors.add(*err);
                progress.tick();
                done();
            });
    });
    std::printf("started: %d of %d in %.0f ms (%.1f tasks/s, %d in flight); failed: %d\n", n - errors.total, n, ms,
                (n - errors.total) * 1000.0 / ms, level, errors.total);
    errors.print();
    return errors.total ? 1 : 0;
}

int burst(sdbus::IProxy& m, int n, const std::string& dir, const std::string& prefix) {
    std::mutex mu;
    std::condition_variable cv;
    int left = n, failed = 0;
    auto put = [&](const std::string& path, const std::string& text) { std::ofstream(path) << text << "\n"; };
    for (int i = 1; i <= n; ++i) {
        const std::string marker = dir + "/out/" + std::to_string(i);
        const std::string spec = nlohmann::json{{"command", "/bin/sh"},
                                                {"args", {"-c", "touch \"$0\"; exec sleep 3600", marker}},
                                                {"logs", false}}
                                     .dump();
        const auto t0 = Clock::now();
        m.callMethodAsync("StartTask")
            .onInterface(kManager)
            .withTimeout(kCallTimeout)
            .withArguments(prefix + "-" + std::to_string(i), std::string("t"), spec)
            .uponReplyInvoke([&, i, t0](taskscope::sdbus_compat::ReplyError err, sdbus::ObjectPath) {
                const auto ms = static_cast<long>(msSince(t0));
                const std::string rc = dir + "/rc/" + std::to_string(i);
                if (err) put(rc + ".out", err->getName() + ": " + err->getMessage());
                put(dir + "/ms/" + std::to_string(i), std::to_string(ms));
                put(rc, err ? "1" : "0");  // last: the shell waits for it
                std::lock_guard lock(mu);
                if (err) ++failed;
                if (--left == 0) cv.notify_all();
            });
    }
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return left == 0; });
    std::printf("burst of %d: %d answered success, %d an error\n", n, n - failed, failed);
    return 0;
}

// Forgets every task once its exit is collected (a forget is refused
// until then: asked again). Returns the indices not forgotten.
std::vector<int> forgetAll(sdbus::IProxy& m, std::vector<int> left, int level, Errors& errors) {
    for (int round = 0; !left.empty() && round < 1800; ++round) {
        std::mutex lm;
        std::vector<int> again;
        fanOut(static_cast<int>(left.size()), level, [&](int k, auto done) {
            const int i = left[k];
            // The same long timeout as the stops. A forget asks nothing of
            // systemd since stop 26, but until then it waited for
            // ResetFailedUnit behind PID 1's minutes of collecting
            // thousands of scopes, and sd-bus's 25 s default made the calls
            // time out here while the manager still had them, until the bus
            // refused this connection more (LimitsExceeded: 128 replies
            // owed to one connection).
            m.callMethodAsync("ForgetTask")
                .onInterface(kManager)
                .withTimeout(kCallTimeout)
                .withArguments(allocOf(i), taskOf(i))
                .uponReplyInvoke([&, i, done](taskscope::sdbus_compat::ReplyError err) {
                    if (err && err->getName() == "org.taskscope.Error.StillRunning") {
                        std::lock_guard lock(lm);
                        again.push_back(i);
                    } else if (err) {
                        errors.add(*err);
                    }
                    done();
                });
        });
        left.swap(again);
        if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return left;
}

int stop(sdbus::IProxy& m, int n, int level) {
    Errors errors;
    const double stopMs = 1000.0 * fanOut(n, level, [&](int i, auto done) {
                              m.callMethodAsync("StopTask")
                                  .onInterface(kManager)
                                  .withTimeout(kCallTimeout)
                                  .withArguments(allocOf(i), taskOf(i), std::string("SIGKILL"), int64_t{0})
                                  .uponReplyInvoke([&, done](taskscope::sdbus_compat::ReplyError err) {
                                      if (err) errors.add(*err);
                                      done();
                                  });
                          });
    const auto t0 = Clock::now();
    std::vector<int> all(n);
    for (int i = 0; i < n; ++i) all[i] = i;
    const auto left = forgetAll(m, all, level, errors);
    std::printf("stop-all: %.0f ms, then forget-all: %.0f ms (%zu not forgotten); failed: %d\n", stopMs,
                msSince(t0), left.size(), errors.total);
    errors.print();
    return errors.total || !left.empty() ? 1 : 0;
}

// Units matching `pattern` (the filled tasks' scopes, their allocations'
// slices) systemd still has loaded.
size_t unitsLeft(sdbus::IProxy& systemd, const std::string& pattern) {
    using Row = sdbus::Struct<std::string, std::string, std::string, std::string, std::string, std::string,
                              sdbus::ObjectPath, uint32_t, std::string, sdbus::ObjectPath>;
    std::vector<Row> rows;
    systemd.callMethod("ListUnitsByPatterns")
        .onInterface("org.freedesktop.systemd1.Manager")
        .withTimeout(kCallTimeout)
        .withArguments(std::vector<std::string>{}, std::vector<std::string>{pattern})
        .storeResultsTo(rows);
    return rows.size();
}

int drain(sdbus::IConnection& bus, sdbus::IProxy& m, int n, int level) {
    auto systemd = sdbus::createProxy(bus, taskscope::sdbus_compat::ServiceName{"org.freedesktop.systemd1"},
                                      sdbus::ObjectPath{"/org/freedesktop/systemd1"});
    Errors errors;
    const auto t0 = Clock::now();
    // The probe: one new allocation's task every 2 s, as a scheduler
    // places new work on the node while the drain runs.
    std::atomic<bool> done{false};
    std::vector<std::pair<double, double>> probes;  // (s since the drain began, StartTask ms)
    std::thread probe([&] {
        // A connection of its own, as a scheduler's would be.
        auto pbus = sdbus::createSystemBusConnection();
        auto pm =
            sdbus::createProxy(*pbus, taskscope::sdbus_compat::ServiceName{kManager}, sdbus::ObjectPath{kManagerPath});
        auto ps = sdbus::createProxy(*pbus, taskscope::sdbus_compat::ServiceName{"org.freedesktop.systemd1"},
                                     sdbus::ObjectPath{"/org/freedesktop/systemd1"});
        const std::string spec = nlohmann::json{{"command", "/bin/sleep"}, {"args", {"1000"}}, {"logs", false}}.dump();
        for (int k = 0; !done; ++k) {
            const double at = msSince(t0) / 1000;
            const auto s0 = Clock::now();
            try {
                sdbus::ObjectPath path;
                pm->callMethod("StartTask")
                    .onInterface(kManager)
                    .withTimeout(kCallTimeout)
                    .withArguments("drainprobe" + std::to_string(k), std::string("t"), spec)
                    .storeResultsTo(path);
                probes.emplace_back(at, msSince(s0));
                const double startMs = msSince(s0);
                // How long systemd takes to read its bus now.
                const auto p0 = Clock::now();
                ps->callMethod("Ping").onInterface("org.freedesktop.DBus.Peer").withTimeout(kCallTimeout);
                std::printf("  %5.1f s: a new task started in %.0f ms (then a Ping of systemd: %.0f ms)\n", at,
                            startMs, msSince(p0));
            } catch (const sdbus::Error& e) {
                std::printf("  %5.1f s: a new task failed after %.0f ms: %s\n", at, msSince(s0), e.getName().c_str());
            }
            std::fflush(stdout);
            for (int w = 0; w < 20 && !done; ++w) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    });
    // Probes on the full node first (at 0, 2, 4 and 6 s): the idle start
    // the ones during the drain compare with.
    std::this_thread::sleep_for(std::chrono::seconds(7));
    const auto d0 = Clock::now();
    const double cpu0 = bench::pid1CpuSeconds();
    const double stopMs = 1000.0 * fanOut(n, level, [&](int i, auto done) {
                              m.callMethodAsync("StopTask")
                                  .onInterface(kManager)
                                  .withTimeout(kCallTimeout)
                                  .withArguments(allocOf(i), taskOf(i), std::string("SIGTERM"), int64_t{5000})
                                  .uponReplyInvoke([&, done](taskscope::sdbus_compat::ReplyError err) {
                                      if (err) errors.add(*err);
                                      done();
                                  });
                          });
    std::printf("  every StopTask answered after %.0f ms\n", stopMs);
    std::vector<int> all(n);
    for (int i = 0; i < n; ++i) all[i] = i;
    const auto left = forgetAll(m, all, level, errors);
    const double forgotS = msSince(d0) / 1000;
    std::printf("  every task exited and forgotten after %.0f s (%zu not)\n", forgotS, left.size());
    std::fflush(stdout);
    size_t scopes = 0;
    while ((scopes = unitsLeft(*systemd, "fill*.scope")) > 0 && msSince(d0) < 3600e3)
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const double collectedS = msSince(d0) / 1000;
    const double pid1 = bench::pid1CpuSeconds() - cpu0;
    // And their allocations' slices, which go as each allocation's last
    // task is forgotten (the manager's lane, after the scopes).
    size_t slices = 0;
    while ((slices = unitsLeft(*systemd, "*-fill*.slice")) > 0 && msSince(d0) < 3600e3)
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::printf("  every allocation slice removed after %.0f s (%zu left)\n", msSince(d0) / 1000, slices);
    done = true;
    probe.join();
    std::vector<double> during, idle;
    const double drainAt = std::chrono::duration<double>(d0 - t0).count();
    for (const auto& [at, ms] : probes) {
        if (at < drainAt) idle.push_back(ms);
        else if (at <= collectedS + drainAt) during.push_back(ms);
    }
    std::sort(during.begin(), during.end());
    std::sort(idle.begin(), idle.end());
    auto q = [&](double f) { return during.empty() ? 0.0 : during[static_cast<size_t>(f * (during.size() - 1))]; };
    const double idleMs = idle.empty() ? 0.0 : idle[idle.size() / 2];
    std::printf("  a new task on the full node before the drain: StartTask median %.0f ms of %zu; during it the "
                "median is %.2fx that, the max %.2fx\n",
                idleMs, idle.size(), idleMs > 0 ? q(0.5) / idleMs : 0.0, idleMs > 0 ? q(1.0) / idleMs : 0.0);
    std::printf("drain of %d: systemd had every scope collected after %.0f s (PID 1 busy %.0f%% of it, %.1f ms per "
                "task); %zu new tasks started meanwhile, StartTask median %.0f ms, p90 %.0f ms, max %.0f ms; "
                "failed: %d\n",
                n, collectedS, 100 * pid1 / collectedS, 1000 * pid1 / n, during.size(), q(0.5), q(0.9), q(1.0),
                errors.total);
    errors.print();
    // The probes go too (a forget once each exit is in).
    for (int pass = 0; pass < 2; ++pass) {
        if (pass) std::this_thread::sleep_for(std::chrono::seconds(2));
        for (size_t k = 0; k < probes.size() + 1; ++k) {
            const auto alloc = "drainprobe" + std::to_string(k);
            try {
                if (pass)
                    m.callMethod("ForgetTask").onInterface(kManager).withArguments(alloc, std::string("t"));
                else
                    m.callMethod("StopTask")
                        .onInterface(kManager)
                        .withArguments(alloc, std::string("t"), std::string("SIGKILL"), int64_t{0});
            } catch (const sdbus::Error&) {
            }
        }
    }
    return errors.total || !left.empty() ? 1 : 0;
}

double median5(const std::function<void()>& f) {
    std::vector<double> t;
    for (int k = 0; k < 5; ++k) {
        const auto t0 = Clock::now();
        f();
        t.push_back(msSince(t0));
    }
    std::sort(t.begin(), t.end());
    return t[2];
}

// The manager's side of a read (and the bus's): the reply is not decoded.
// Decoding 10,000 objects into variants is the caller's cost, timed apart.
int reads(sdbus::IProxy& m) {
    auto call = [&](const char* iface, const char* method) {
        return median5([&] { m.callMethod(method).onInterface(iface); });
    };
    const double list = call(kManager, "ListTasks");
    const double managed = call("org.freedesktop.DBus.ObjectManager", "GetManagedObjects");
    std::vector<sdbus::Struct<std::string, std::string, std::string, sdbus::ObjectPath>> tasks;
    m.callMethod("ListTasks").onInterface(kManager).storeResultsTo(tasks);
    std::map<sdbus::ObjectPath, std::map<std::string, std::map<std::string, sdbus::Variant>>> objects;
    const auto t0 = Clock::now();
    m.callMethod("GetManagedObjects").onInterface("org.freedesktop.DBus.ObjectManager").storeResultsTo(objects);
    const double decoded = msSince(t0);
    std::printf("ListTasks: %.1f ms median of 5 (%zu tasks); GetManagedObjects: %.1f ms (%zu objects; %.1f ms with "
                "the reply decoded into variants)\n",
                list, tasks.size(), managed, objects.size(), decoded);
    return 0;
}

int waitRunning(sdbus::IProxy& m, int n, int seconds) {
    const auto t0 = Clock::now();
    size_t running = 0;
    while (msSince(t0) < seconds * 1000.0) {
        try {
            std::vector<sdbus::Struct<std::string, std::string, std::string, sdbus::ObjectPath>> tasks;
            m.callMethod("ListTasks").onInterface(kManager).storeResultsTo(tasks);
            running = std::count_if(tasks.begin(), tasks.end(), [](const auto& t) { return t.template get<2>() == "running"; });
            if (running >= static_cast<size_t>(n)) {
                std::printf("all %d running after %.0f ms\n", n, msSince(t0));
                return 0;
            }
        } catch (const sdbus::Error&) {
            // not back on the bus yet
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::printf("only %zu of %d running after %d s\n", running, n, seconds);
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string what = argc > 1 ? argv[1] : "";
    const int a = argc > 2 ? std::atoi(argv[2]) : 0, b = argc > 3 ? std::atoi(argv[3]) : 32;
    if ((what != "reads" && a <= 0) || (what != "burst" && b <= 0) || (what == "burst" && argc != 5)) {
        std::fprintf(stderr,
                     "usage: %s start N P | stop N P | drain N P | reads | wait-running N SECONDS | burst N DIR PREFIX\n",
                     argv[0]);
        return 2;
    }
    ::signal(SIGPIPE, SIG_IGN);
    auto bus = sdbus::createSystemBusConnection();
    auto m = sdbus::createProxy(*bus, taskscope::sdbus_compat::ServiceName{kManager}, sdbus::ObjectPath{kManagerPath});
    bus->enterEventLoopAsync();
    int rc = 2;
    if (what == "start") rc = start(*m, a, b);
    if (what == "stop") rc = stop(*m, a, b);
    if (what == "drain") rc = drain(*bus, *m, a, b);
    if (what == "reads") rc = reads(*m);
    if (what == "wait-running") rc = waitRunning(*m, a, b);
    if (what == "burst") rc = burst(*m, a, argv[3], argv[4]);
    std::fflush(stdout);
    bus->leaveEventLoop();
    return rc;
}
