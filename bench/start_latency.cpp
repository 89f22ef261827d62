// StartTask latency against two floors measured in the same run:
//   floor        - what any launcher must do (bench/scope_floor.hpp): fork
//                  a child blocked before exec, StartTransientUnit of a
//                  scope holding it (waiting for JobRemoved), release it;
//   systemd-run  - `systemd-run --scope --slice=... CMD`, the stock tool;
//   taskscope    - StartTask over the system bus, call to reply (the reply
//                  comes once the task was released in its scope).
//   taskscope-bench-start [N] [--new-alloc] [--settle] [--warm]
// Every task is of allocation "bench" (its slice made by the first start),
// or with --new-alloc of an allocation of its own, so that each start also
// makes its allocation's slice (and, nested, often its bucket's): the cost
// of a new allocation's first task (issue 31); systemd-run then makes a
// new slice each round too (`--slice=bench-run-N.slice`), its like.
// --settle: each of the three waits until PID 1 is idle (its CPU time
// unchanged for 100 ms), so that none pays for what the one before left
// systemd to do (collecting the scope of a task that ended, the units'
// cgroups running empty): one task on an idle node. Without it the three
// follow each other at once.
// --warm: first 256 throwaway allocations, each one task started and
// forgotten, so that the slices every allocation shares exist (nested:
// the 64 buckets), as on a node that has run a few hundred allocations;
// without it a new allocation on a fresh node often makes its bucket too.
// The three are interleaved, one of each per round, so drift in the guest
// (the streamer starting, the other vCPU busy) hits all alike. Prints the
// quartiles of each, the ratio of medians, and the median of the per-round
// ratios (a paired ratio: what one round's noise cannot move much).

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <vector>

#include "common/sdbus_compat.hpp"
#include "pid1_cpu.hpp"
#include "scope_floor.hpp"

namespace {

using bench::Clock;

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}
double median(const std::vector<double>& v) { return quantile(v, 0.5); }

/// Until PID 1 used no CPU for 100 ms (at most 3 s).
void settle() {
    double last = bench::pid1CpuSeconds();
    for (int i = 0; i < 30; ++i) {
        ::usleep(100000);
        const double now = bench::pid1CpuSeconds();
        if (now == last) return;
        last = now;
    }
}

double systemdRunOnce(const std::string& slice) {
    const auto sliceArg = "--slice=" + slice;
    const auto t0 = Clock::now();
    const pid_t child = ::fork();
    if (child == 0) {
        ::execlp("systemd-run", "systemd-run", "--quiet", "--scope", sliceArg.c_str(), "/bin/true", nullptr);
        _exit(127);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return ms(Clock::now() - t0);
}

}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 50;
    bool newAlloc = false, settled = false, warm = false;
    for (int a = 2; a < argc; ++a) {
        newAlloc |= std::string(argv[a]) == "--new-alloc";
        settled |= std::string(argv[a]) == "--settle";
        warm |= std::string(argv[a]) == "--warm";
    }
    auto idle = [settled] {
        if (settled) settle();
    };
    auto allocOf = [newAlloc](int i) { return newAlloc ? "bench-" + std::to_string(i) : std::string("bench"); };
    auto bus = sdbus::createSystemBusConnection();
    bench::Floor scopes(*bus);
    bus->enterEventLoopAsync();
    auto manager = sdbus::createProxy(*bus, taskscope::sdbus_compat::ServiceName{"org.taskscope.Manager1"},
                                      sdbus::ObjectPath{"/org/taskscope/Manager1"});
    const char* iface = "org.taskscope.Manager1";
    const std::string spec = nlohmann::json{{"command", "/bin/true"}, {"logs", false}}.dump();

    auto forgetAll = [&](const std::vector<std::pair<std::string, std::string>>& tasks) {
        for (const auto& [alloc, task] : tasks) {
            // /bin/true is long gone; the exit may still be on its way.
            for (int tries = 0; tries < 100; ++tries) {
                try {
                    manager->callMethod("ForgetTask").onInterface(iface).withArguments(alloc, task);
                    break;
                } catch (const sdbus::Error&) {
                    ::usleep(50000);
                }
            }
        }
    };
    if (warm) {
        std::vector<std::pair<std::string, std::string>> warmed;
        for (int i = 0; i < 256; ++i) {
            sdbus::ObjectPath path;
            const auto alloc = "warm-" + std::to_string(i);
            manager->callMethod("StartTask").onInterface(iface).withArguments(alloc, "t", spec).storeResultsTo(path);
            warmed.emplace_back(alloc, "t");
        }
        forgetAll(warmed);
        settle();
    }

    std::vector<double> floor, run, ts;
    // Interleaved so that drift in the guest hits all three alike.
    for (int i = 0; i < n; ++i) {
        idle();
        floor.push_back(scopes.startAndWait("bench-start-" + std::to_string(i) + ".scope"));
        idle();
        // With --new-alloc, systemd-run makes a slice too: a new one each
        // round, as a new allocation's first task makes its own (issue 49).
        run.push_back(systemdRunOnce(newAlloc ? "bench-run-" + std::to_string(i) + ".slice" : "bench.slice"));
        const auto task = "t" + std::to_string(i);
        idle();
        const auto t0 = Clock::now();
        sdbus::ObjectPath path;
        manager->callMethod("StartTask").onInterface(iface).withArguments(allocOf(i), task, spec).storeResultsTo(path);
        ts.push_back(ms(Clock::now() - t0));
    }
    std::vector<std::pair<std::string, std::string>> started;
    for (int i = 0; i < n; ++i) started.emplace_back(allocOf(i), "t" + std::to_string(i));
    forgetAll(started);
    scopes.clear();
    if (newAlloc && std::system("systemctl stop 'bench-run-*.slice'") != 0)
        std::fprintf(stderr, "(systemd-run's slices bench-run-*.slice were not all stopped)\n");
    std::vector<double> perFloor, perRun;
    for (int i = 0; i < n; ++i) {
        perFloor.push_back(ts[i] / floor[i]);
        perRun.push_back(ts[i] / run[i]);
    }
    auto show = [](const char* what, const std::vector<double>& v) {
        std::printf("  %-24s p25 %6.1f  median %6.1f  p75 %6.1f ms\n", what, quantile(v, 0.25), median(v),
                    quantile(v, 0.75));
    };
    std::printf("start latency, %d interleaved rounds%s%s%s:\n", n, newAlloc ? ", each task a new allocation" : "",
                settled ? ", each on an idle PID 1" : "", warm ? ", after 256 allocations" : "");
    show("floor", floor);
    show("systemd-run --scope", run);
    show("taskscope StartTask", ts);
    if (scopes.failures()) std::printf("  (floor: %d failed starts)\n", scopes.failures());
    std::printf("ratio taskscope/floor: %.2f of medians, %.2f median per round (target <= 1.5)\n",
                median(ts) / median(floor), median(perFloor));
    std::printf("ratio taskscope/systemd-run: %.2f of medians, %.2f median per round (target <= %s)\n",
                median(ts) / median(run), median(perRun), newAlloc ? "0.8, both making a slice" : "0.5");
    bus->leaveEventLoop();
    return 0;
}
