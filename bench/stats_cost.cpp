// taskscope-bench-stats: what one stats sample costs per task, in CPU time
// of this process, with the streamer's own code path: the cgroup files kept
// open and read with pread at offset 0, parsed, the CPU percentage computed
// and the sample converted to its D-Bus struct (the signal's serialization
// and the bus are not included; bench/stats_cpu.sh measures the daemon as a
// whole). Runs anywhere, read-only:
//
//   taskscope-bench-stats ROOT v1|v2 CGROUP [COPIES [ROUNDS]]
//       samples CGROUP (e.g. /nomad.slice/x.scope) as if it were COPIES tasks
//       (default 1000), each with its own open files, ROUNDS times (default 20)
//   taskscope-bench-stats ROOT v1|v2 --children PARENT [ROUNDS]
//       samples every cgroup below PARENT (e.g. /nomad.slice) once per round
//
// Then, for the first cgroup, what one pread at offset 0 of each of its
// files costs, and what open+read+close would cost instead: where the time
// goes, and what keeping the files open saves.
//
// ROOT is /sys/fs/cgroup, or a fixture tree such as tests/fixtures/stats/v2.
//
//   taskscope-bench-stats --sampler ROOT v1|v2 CGROUP [TASKS [ROUNDS]]
//       the streamer's whole path per tick but the event loop: StatsSampler
//       (schedule, reads, percent) sampling TASKS tasks (default 1000) that
//       all name CGROUP, and the Samples signal for each tick, on the bus in
//       TASKSCOPE_BUS_ADDRESS (or the system bus)
//   taskscope-bench-stats --signal [TASKS [ROUNDS]]
//       what emitting one Samples signal with TASKS samples (default 1000)
//       costs this process per sample: conversion and D-Bus serialization,
//       on the bus in TASKSCOPE_BUS_ADDRESS (or the system bus)

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sdbus-c++/sdbus-c++.h>

#include "common/sdbus_compat.hpp"

#include "scope/cgroup_stats.hpp"
#include "stream/daemon/stats_adaptor.hpp"
#include "stream/stats/stats_math.hpp"
#include "stream/stats/stats_sampler.hpp"

using namespace taskscope::scope;
using namespace taskscope::stream::stats;
using namespace taskscope::stream::daemon;

namespace {

double cpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double wallSeconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: taskscope-bench-stats ROOT v1|v2 CGROUP [COPIES [ROUNDS]]\n"
                 "       taskscope-bench-stats ROOT v1|v2 --children PARENT [ROUNDS]\n"
                 "       taskscope-bench-stats --sampler ROOT v1|v2 CGROUP [TASKS [ROUNDS]]\n"
                 "       taskscope-bench-stats --signal [TASKS [ROUNDS]]\n");
    std::exit(2);
}

// The cgroups below parent, in the hierarchy that has them all (v1: memory).
std::vector<std::string> children(const std::string& root, CgroupVersion v, const std::string& parent) {
    const std::string dir = root + (v == CgroupVersion::V1 ? "/memory" : "") + parent;
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return out;
    while (auto* e = ::readdir(d))
        if (e->d_type == DT_DIR && e->d_name[0] != '.') out.push_back(parent + "/" + e->d_name);
    ::closedir(d);
    return out;
}

// CPU time per call of fn, over n calls.
template <class F>
double usPerCall(int n, F&& fn) {
    const double t0 = cpuSeconds();
    for (int i = 0; i < n; ++i) fn();
    return (cpuSeconds() - t0) / n * 1e6;
}

void perFile(const std::string& root, CgroupVersion version, const std::string& cgroup) {
    constexpr int kCalls = 2000;
    char buf[16384];
    std::printf("per file of %s (CPU per call): pread at 0 on the kept fd | open+read+close\n", cgroup.c_str());
    for (StatFile f : statFiles(version)) {
        const std::string controller = statFileController(f);
        const std::string path = root + (controller.empty() ? "" : "/" + controller) + cgroup + "/" + statFileName(f);
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            std::printf("  %-28s missing\n", statFileName(f));
            continue;
        }
        const double kept = usPerCall(kCalls, [&] { (void)!::pread(fd, buf, sizeof buf, 0); });
        ::close(fd);
        const double reopened = usPerCall(kCalls, [&] {
            const int f2 = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            (void)!::read(f2, buf, sizeof buf);
            ::close(f2);
        });
        std::printf("  %-28s %8.2f us | %8.2f us\n", statFileName(f), kept, reopened);
    }
}

int signalCost(int n, int rounds) {
    const char* address = std::getenv("TASKSCOPE_BUS_ADDRESS");
    auto bus = address && *address ? sdbus::createSessionBusConnectionWithAddress(address)
                                   : sdbus::createSystemBusConnection();
    taskscope::common::EventLoop loop;
    auto reader = CgroupStatsReader::open("/", CgroupVersion::V2);
    if (!reader) return 1;
    StatsSampler sampler(loop, std::move(*reader), {});
    StatsObject object(*bus, "/org/taskscope/BenchStats", sampler);
    std::vector<TaskSample> samples(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
        auto& s = samples[static_cast<size_t>(i)];
        s.key = {"bench-alloc-0123456789abcdef", "task" + std::to_string(i)};
        s.timestampUs = 1795367252963691;
        s.intervalMs = 1000;
        s.stats.cpuUserUs = s.stats.cpuSystemUs = s.stats.cpuTotalUs = 123456789;
        s.stats.memoryRss = s.stats.memoryCache = s.stats.memoryUsage = s.stats.memoryPeak = 209715200;
        s.stats.memoryKernel = s.stats.memorySwap = s.stats.pids = 3;
        s.cpu.total = s.cpu.user = s.cpu.system = 99.5;
    }
    const double cpu0 = cpuSeconds();
    for (int r = 0; r < rounds; ++r) {
        object.samplesTaken(samples);
        while (taskscope::sdbus_compat::processPending(*bus)) {
        }
    }
    const double us = (cpuSeconds() - cpu0) / (static_cast<double>(n) * rounds) * 1e6;
    std::printf("Samples signal: %.2f us CPU per sample (%d samples per signal, %d signals)\n", us, n, rounds);
    return 0;
}

int samplerCost(const std::string& root, CgroupVersion version, const std::string& cgroup, int n, int rounds) {
    const char* address = std::getenv("TASKSCOPE_BUS_ADDRESS");
    auto bus = address && *address ? sdbus::createSessionBusConnectionWithAddress(address)
                                   : sdbus::createSystemBusConnection();
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        (void)::setrlimit(RLIMIT_NOFILE, &rl);
    }
    taskscope::common::EventLoop loop;
    auto reader = CgroupStatsReader::open(root, version);
    auto path = CgroupPath::parse(cgroup);
    if (!reader || !path) return 1;
    StatsSampler sampler(loop, std::move(*reader), {});
    StatsObject object(*bus, "/org/taskscope/BenchStats", sampler);
    for (int i = 0; i < n; ++i) sampler.addTask({"bench-alloc-0123456789abcdef", "task" + std::to_string(i)}, *path);
    auto t = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
    object.samplesTaken(sampler.sampleDue(t));  // opens the files; the first samples
    size_t samples = 0;
    const double cpu0 = cpuSeconds();
    for (int r = 0; r < rounds; ++r) {
        t += std::chrono::seconds(1);
        const auto batch = sampler.sampleDue(t);
        samples += batch.size();
        object.samplesTaken(batch);
        while (taskscope::sdbus_compat::processPending(*bus)) {
        }
    }
    const double us = (cpuSeconds() - cpu0) / static_cast<double>(samples ? samples : 1) * 1e6;
    std::printf("sampler + Samples signal (%s, root %s): %.2f us CPU per task and sample (%zu samples in %d ticks) "
                "=> 1000 tasks every 1 s: %.3f%% of one core\n",
                toString(version), root.c_str(), us, samples, rounds, us * 1000 / 1e6 * 100);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 5 && std::string(argv[1]) == "--sampler")
        return samplerCost(argv[2], std::string(argv[3]) == "v2" ? CgroupVersion::V2 : CgroupVersion::V1, argv[4],
                           argc > 5 ? std::atoi(argv[5]) : 1000, argc > 6 ? std::atoi(argv[6]) : 20);
    if (argc >= 2 && std::string(argv[1]) == "--signal")
        return signalCost(argc > 2 ? std::atoi(argv[2]) : 1000, argc > 3 ? std::atoi(argv[3]) : 50);
    if (argc < 4) usage();
    const std::string root = argv[1];
    const std::string vs = argv[2];
    if (vs != "v1" && vs != "v2") usage();
    const auto version = vs == "v2" ? CgroupVersion::V2 : CgroupVersion::V1;
    std::vector<std::string> cgroups;
    int rounds = 20;
    if (std::string(argv[3]) == "--children") {
        if (argc < 5) usage();
        cgroups = children(root, version, argv[4]);
        if (argc > 5) rounds = std::atoi(argv[5]);
    } else {
        const int copies = argc > 4 ? std::atoi(argv[4]) : 1000;
        if (argc > 5) rounds = std::atoi(argv[5]);
        cgroups.assign(static_cast<size_t>(copies > 0 ? copies : 1), argv[3]);
    }
    if (cgroups.empty() || rounds < 1) usage();

    // Up to 9 files per task stay open, as in the streamer.
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        (void)::setrlimit(RLIMIT_NOFILE, &rl);
    }
    auto reader = CgroupStatsReader::open(root, version);
    if (!reader) {
        std::fprintf(stderr, "%s\n", reader.error().message.c_str());
        return 1;
    }
    struct Task {
        CgroupFiles files;
        CpuPercentTracker cpu;
    };
    std::vector<Task> tasks;
    tasks.reserve(cgroups.size());
    size_t openFiles = 0, missing = 0;
    const double openCpu0 = cpuSeconds();
    for (const auto& c : cgroups) {
        auto path = CgroupPath::parse(c);
        if (!path) {
            std::fprintf(stderr, "%s\n", path.error().message.c_str());
            return 1;
        }
        auto files = reader->openCgroup(*path);
        if (!files) {
            std::fprintf(stderr, "%s\n", files.error().message.c_str());
            return 1;
        }
        openFiles += files->openCount();
        missing += files->missing().size();
        tasks.push_back({std::move(*files), {}});
    }
    const double openCpu = cpuSeconds() - openCpu0;

    std::printf("stats sample cost (%s, root %s): %zu tasks x %d rounds; %zu files open (%zu missing); "
                "opening them: %.2f us per task\n",
                vs.c_str(), root.c_str(), tasks.size(), rounds, openFiles, missing,
                openCpu / static_cast<double>(tasks.size()) * 1e6);
    // Once with memory.stat read at every sample (the full cost of a task
    // whose memory moves), once as the streamer does (read when the usage
    // moved, else at least every 10th sample).
    for (const unsigned every : {1u, 10u}) {
        reader->setMemoryStatEvery(every);
        uint64_t samples = 0, failed = 0;
        const double cpu0 = cpuSeconds(), wall0 = wallSeconds();
        for (int r = 0; r < rounds; ++r) {
            const auto now = std::chrono::steady_clock::now();
            for (auto& t : tasks) {
                auto s = reader->read(t.files);
                if (!s) {
                    ++failed;
                    continue;
                }
                TaskSample sample;
                sample.key = {"bench", "task"};
                sample.stats = *s;
                sample.cpu = t.cpu.update(CpuTimes{s->cpuTotalUs, s->cpuUserUs, s->cpuSystemUs}, now);
                auto wire = toWire(sample);
                asm volatile("" : : "r"(&wire) : "memory");  // keep the conversion
                ++samples;
            }
        }
        const double cpu = cpuSeconds() - cpu0, wall = wallSeconds() - wall0;
        const double perSampleUs = cpu / static_cast<double>(samples ? samples : 1) * 1e6;
        std::printf("%s: %.2f us CPU (%.2f us wall) per task and sample (%llu samples, %llu failed) "
                    "=> 1000 tasks every 1 s: %.3f%% of one core (target <= 1%%)\n",
                    every == 1 ? "memory.stat at every sample" : "memory.stat when usage moved (streamer)",
                    perSampleUs, wall / static_cast<double>(samples ? samples : 1) * 1e6,
                    static_cast<unsigned long long>(samples), static_cast<unsigned long long>(failed),
                    perSampleUs * 1000 / 1e6 * 100);
    }
    perFile(root, version, cgroups.front());
    return 0;
}
