// StartTask latency against two floors measured in the same run:
//   floor        - what any launcher must do: fork a child blocked before
//                  exec, StartTransientUnit of a scope holding it (waiting
//                  for JobRemoved), release it to exec the command;
//   systemd-run  - `systemd-run --scope --slice=... CMD`, the stock tool;
//   taskscope    - StartTask over the system bus, call to reply (the reply
//                  comes once the task was released in its scope).
// Prints medians and the ratios taskscope/floor and taskscope/systemd-run.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <vector>

#include "scope/sdbus_systemd_client.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

double floorOnce(taskscope::scope::SdbusSystemdClient& systemd, int i) {
    int go[2];
    if (::pipe2(go, O_CLOEXEC) < 0) std::abort();
    const auto t0 = Clock::now();
    const pid_t child = ::fork();
    if (child == 0) {
        char c;
        if (::read(go[0], &c, 1) != 1) _exit(127);
        ::execl("/bin/true", "true", nullptr);
        _exit(127);
    }
    ::close(go[0]);
    taskscope::scope::UnitProperties props;
    props.emplace_back("Slice", sdbus::Variant(std::string("bench.slice")));
    const auto unit = "bench-floor-" + std::to_string(i) + ".scope";
    if (auto r = systemd.startScope(unit, {static_cast<uint32_t>(child)}, props); !r) {
        std::fprintf(stderr, "floor: %s\n", r.error().message.c_str());
        std::exit(1);
    }
    if (::write(go[1], "g", 1) != 1) std::abort();
    const auto t1 = Clock::now();
    ::close(go[1]);
    ::waitpid(child, nullptr, 0);
    return ms(t1 - t0);
}

double systemdRunOnce() {
    const auto t0 = Clock::now();
    const pid_t child = ::fork();
    if (child == 0) {
        ::execlp("systemd-run", "systemd-run", "--quiet", "--scope", "--slice=bench.slice", "/bin/true", nullptr);
        _exit(127);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return ms(Clock::now() - t0);
}

}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 50;
    auto bus = sdbus::createSystemBusConnection();
    taskscope::scope::SdbusSystemdClient systemd(*bus);
    if (auto r = systemd.subscribe(); !r) {
        std::fprintf(stderr, "subscribe: %s\n", r.error().message.c_str());
        return 1;
    }
    auto manager = sdbus::createProxy(*bus, "org.taskscope.Manager1", "/org/taskscope/Manager1");
    const char* iface = "org.taskscope.Manager1";
    const std::string spec = nlohmann::json{{"command", "/bin/true"}, {"logs", false}}.dump();

    std::vector<double> floor, run, ts;
    // Interleaved so that drift in the guest hits all three alike.
    for (int i = 0; i < n; ++i) {
        floor.push_back(floorOnce(systemd, i));
        run.push_back(systemdRunOnce());
        const auto task = "t" + std::to_string(i);
        const auto t0 = Clock::now();
        sdbus::ObjectPath path;
        manager->callMethod("StartTask").onInterface(iface).withArguments("bench", task, spec).storeResultsTo(path);
        ts.push_back(ms(Clock::now() - t0));
    }
    for (int i = 0; i < n; ++i) {
        // /bin/true is long gone; the exit may still be on its way.
        for (int tries = 0; tries < 100; ++tries) {
            try {
                manager->callMethod("ForgetTask").onInterface(iface).withArguments("bench", "t" + std::to_string(i));
                break;
            } catch (const sdbus::Error&) {
                ::usleep(50000);
            }
        }
    }
    const double f = median(floor), r = median(run), t = median(ts);
    std::printf("start latency, median of %d (ms): floor %.1f, systemd-run --scope %.1f, taskscope StartTask %.1f\n", n,
                f, r, t);
    std::printf("ratio taskscope/floor: %.2f (target <= 1.5)\n", t / f);
    std::printf("ratio taskscope/systemd-run: %.2f (target <= 0.5)\n", t / r);
    return 0;
}
