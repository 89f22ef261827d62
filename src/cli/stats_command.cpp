// taskscopectl stats: resource usage of tasks, or totals of allocations,
// from org.taskscope.Stats1.

#include "cli/stats_command.hpp"

#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cli/cli.hpp"
#include "client/proxies.hpp"
#include "wire/stats_wire.hpp"

namespace taskscope::cli {

namespace {

using wire::AllocationStats;
using wire::TaskStats;

// Samples as the Stats1 XML has them, which wire::TaskStats is.
static_assert(std::is_same_v<client::StatsProxy::Sample, TaskStats>);
static_assert(std::is_same_v<decltype(std::declval<client::StatsProxy&>().GetAllocationStats("")), AllocationStats>);

struct Args {
    bool json = false;
    bool watch = false;
    bool alloc = false;  // --alloc: allocations' totals; task then holds at most the allocation
    std::optional<int64_t> interval;  // -1: back to the default
    std::vector<std::string> task;    // empty or {alloc, task}
};

Args parseArgs(const std::vector<std::string>& args, bool json) {
    Args a;
    a.json = json;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--json") {
            a.json = true;
        } else if (args[i] == "--watch" || args[i] == "-w") {
            a.watch = true;
        } else if (args[i] == "--alloc") {
            a.alloc = true;
        } else if (args[i] == "--interval" && i + 1 < args.size()) {
            const auto& v = args[++i];
            if (v == "default") {
                a.interval = -1;
                continue;
            }
            char* end = nullptr;
            errno = 0;
            const long long ms = std::strtoll(v.c_str(), &end, 10);
            if (v.empty() || *end || errno || ms < 0) die("--interval takes milliseconds (0: off) or 'default'", 2);
            a.interval = ms;
        } else if (!args[i].empty() && args[i][0] == '-') {
            die("stats: unknown option '" + args[i] + "'; see --help", 2);
        } else {
            a.task.push_back(args[i]);
        }
    }
    if (a.alloc) {
        // Allocations have no samples signal and no interval of their own (DefaultIntervalMs is theirs).
        if (a.watch || a.interval) die("stats --alloc takes no --watch or --interval; see --help", 2);
        if (a.task.size() > 1) die("stats --alloc takes no allocation or one ALLOC; see --help", 2);
        return a;
    }
    if (!a.task.empty() && a.task.size() != 2) die("stats takes no task or ALLOC TASK; see --help", 2);
    if (a.interval == -1 && a.task.empty()) die("--interval default needs ALLOC TASK", 2);
    return a;
}

bool has(const TaskStats& s, wire::Field f) { return (s.get<wire::kMeasured>() & wire::bit(f)) != 0; }

template <wire::Field F>
nlohmann::json value(const TaskStats& s) {
    if (!has(s, F)) return nullptr;
    return std::get<F>(s);
}

std::string isoTime(uint64_t us) {
    const time_t secs = static_cast<time_t>(us / 1000000);
    tm t{};
    gmtime_r(&secs, &t);
    char buf[80];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                  t.tm_hour, t.tm_min, t.tm_sec, static_cast<unsigned>(us % 1000000 / 1000));
    return buf;
}

nlohmann::json toJson(const TaskStats& s) {
    return {
        {"alloc_id", s.get<wire::kAllocId>()},
        {"task", s.get<wire::kTask>()},
        {"timestamp_us", s.get<wire::kTimestampUs>()},
        {"time", isoTime(s.get<wire::kTimestampUs>())},
        {"interval_ms", s.get<wire::kIntervalMs>()},
        {"counters_reset", (s.get<wire::kMeasured>() & wire::kCountersReset) != 0},
        {"cpu",
         {{"user_us", value<wire::kCpuUserUs>(s)},
          {"system_us", value<wire::kCpuSystemUs>(s)},
          {"total_us", value<wire::kCpuTotalUs>(s)},
          {"percent", value<wire::kCpuPercent>(s)},
          {"user_percent", value<wire::kCpuUserPercent>(s)},
          {"system_percent", value<wire::kCpuSystemPercent>(s)},
          {"throttled_periods", value<wire::kCpuThrottledPeriods>(s)},
          {"throttled_time_us", value<wire::kCpuThrottledTimeUs>(s)}}},
        {"memory",
         {{"rss", value<wire::kMemoryRss>(s)},
          {"cache", value<wire::kMemoryCache>(s)},
          {"swap", value<wire::kMemorySwap>(s)},
          {"usage", value<wire::kMemoryUsage>(s)},
          {"peak", value<wire::kMemoryPeak>(s)},
          {"kernel", value<wire::kMemoryKernel>(s)}}},
        {"pids", value<wire::kPids>(s)},
    };
}

std::string bytes(const TaskStats& s, wire::Field f, uint64_t v) {
    if (!has(s, f)) return "-";
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double d = static_cast<double>(v);
    size_t u = 0;
    while (d >= 1024 && u + 1 < std::size(units)) {
        d /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.1f%s", d, units[u]);
    return buf;
}

std::string percent(const TaskStats& s, wire::Field f, double v) {
    if (!has(s, f)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", v);
    return buf;
}

std::string count(const TaskStats& s, wire::Field f, uint64_t v) { return has(s, f) ? std::to_string(v) : "-"; }

std::string clockTime(uint64_t us) {
    const time_t secs = static_cast<time_t>(us / 1000000);
    tm t{};
    localtime_r(&secs, &t);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03u", t.tm_hour, t.tm_min, t.tm_sec,
                  static_cast<unsigned>(us % 1000000 / 1000));
    return buf;
}

void printLine(const std::string& line) {
    writeAll(STDOUT_FILENO, line.data(), line.size());
    writeAll(STDOUT_FILENO, "\n", 1);
}

// Like `docker stats` / `systemd-cgtop`: one row per task.
void printHeader(bool withTime) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s%-36s %-16s %7s %10s %10s %10s %10s %10s %5s %9s", withTime ? "TIME         " : "",
                  "ALLOC", "TASK", "CPU", "MEM", "RSS", "CACHE", "SWAP", "PEAK", "PIDS", "INTERVAL");
    printLine(buf);
}

/// The usage columns a task row and an allocation row share: CPU% to the interval.
std::string usageColumns(const TaskStats& s) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%7s %10s %10s %10s %10s %10s %5s %7" PRIu64 "ms",
                  percent(s, wire::kCpuPercent, s.get<wire::kCpuPercent>()).c_str(),
                  bytes(s, wire::kMemoryUsage, s.get<wire::kMemoryUsage>()).c_str(),
                  bytes(s, wire::kMemoryRss, s.get<wire::kMemoryRss>()).c_str(),
                  bytes(s, wire::kMemoryCache, s.get<wire::kMemoryCache>()).c_str(),
                  bytes(s, wire::kMemorySwap, s.get<wire::kMemorySwap>()).c_str(),
                  bytes(s, wire::kMemoryPeak, s.get<wire::kMemoryPeak>()).c_str(),
                  count(s, wire::kPids, s.get<wire::kPids>()).c_str(), s.get<wire::kIntervalMs>());
    return buf;
}

void printRow(const TaskStats& s, bool withTime) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s%-36s %-16s %s",
                  withTime ? (clockTime(s.get<wire::kTimestampUs>()) + " ").c_str() : "",
                  s.get<wire::kAllocId>().c_str(), s.get<wire::kTask>().c_str(), usageColumns(s).c_str());
    printLine(buf);
}

void printDetail(const TaskStats& s) {
    auto line = [](const std::string& k, const std::string& v) { printLine(k + ": " + v); };
    auto us = [&](wire::Field f, uint64_t v) { return has(s, f) ? std::to_string(v) + " us" : "-"; };
    auto b = [&](wire::Field f, uint64_t v) {
        return has(s, f) ? std::to_string(v) + " (" + bytes(s, f, v) + ")" : "-";
    };
    line("alloc_id", s.get<wire::kAllocId>());
    line("task", s.get<wire::kTask>());
    line("time", isoTime(s.get<wire::kTimestampUs>()));
    line("interval", std::to_string(s.get<wire::kIntervalMs>()) + " ms");
    line("cpu_percent", percent(s, wire::kCpuPercent, s.get<wire::kCpuPercent>()) + " (of one core)");
    line("cpu_user_percent", percent(s, wire::kCpuUserPercent, s.get<wire::kCpuUserPercent>()));
    line("cpu_system_percent", percent(s, wire::kCpuSystemPercent, s.get<wire::kCpuSystemPercent>()));
    line("cpu_user", us(wire::kCpuUserUs, s.get<wire::kCpuUserUs>()));
    line("cpu_system", us(wire::kCpuSystemUs, s.get<wire::kCpuSystemUs>()));
    line("cpu_total", us(wire::kCpuTotalUs, s.get<wire::kCpuTotalUs>()));
    line("cpu_throttled_periods", count(s, wire::kCpuThrottledPeriods, s.get<wire::kCpuThrottledPeriods>()));
    line("cpu_throttled_time", us(wire::kCpuThrottledTimeUs, s.get<wire::kCpuThrottledTimeUs>()));
    line("memory_rss", b(wire::kMemoryRss, s.get<wire::kMemoryRss>()));
    line("memory_cache", b(wire::kMemoryCache, s.get<wire::kMemoryCache>()));
    line("memory_swap", b(wire::kMemorySwap, s.get<wire::kMemorySwap>()));
    line("memory_usage", b(wire::kMemoryUsage, s.get<wire::kMemoryUsage>()));
    line("memory_peak", b(wire::kMemoryPeak, s.get<wire::kMemoryPeak>()));
    line("memory_kernel", b(wire::kMemoryKernel, s.get<wire::kMemoryKernel>()));
    line("pids", count(s, wire::kPids, s.get<wire::kPids>()));
    if (s.get<wire::kMeasured>() & wire::kCountersReset) line("counters_reset", "yes (cgroup recreated)");
}

// Allocations: the same columns as tasks, TASKS in place of TASK, and the slices last.
nlohmann::json toJson(const AllocationStats& a) {
    auto j = toJson(wire::taskShaped(a));
    j.erase("task");
    j["slices"] = std::get<wire::kSlices>(a);
    j["tasks"] = std::get<wire::kTasks>(a);
    return j;
}

void printAllocationHeader() {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-36s %5s %7s %10s %10s %10s %10s %10s %5s %9s %s", "ALLOC", "TASKS", "CPU", "MEM",
                  "RSS", "CACHE", "SWAP", "PEAK", "PIDS", "INTERVAL", "SLICE");
    printLine(buf);
}

void printAllocationRow(const AllocationStats& a) {
    const auto s = wire::taskShaped(a);
    std::string slices;
    for (const auto& slice : std::get<wire::kSlices>(a)) slices += (slices.empty() ? "" : ",") + slice;
    char buf[1024];
    std::snprintf(buf, sizeof buf, "%-36s %5" PRIu64 " %s %s", s.get<wire::kAllocId>().c_str(),
                  std::get<wire::kTasks>(a), usageColumns(s).c_str(), slices.empty() ? "-" : slices.c_str());
    printLine(buf);
}

/// Every sample (of tasks or allocations) as one JSON array on one line.
template <typename Samples>
int printJsonArray(const Samples& all) {
    auto arr = nlohmann::json::array();
    for (const auto& s : all) arr.push_back(toJson(s));
    printLine(arr.dump());
    return 0;
}

int allocationStats(const Args& a, client::StatsProxy& stats) {
    if (!a.task.empty()) {
        const auto one = stats.GetAllocationStats(a.task[0]);
        if (a.json) {
            printLine(toJson(one).dump());
        } else {
            printAllocationHeader();
            printAllocationRow(one);
        }
        return 0;
    }
    const auto all = stats.GetAllAllocationStats();
    if (a.json) return printJsonArray(all);
    printAllocationHeader();
    for (const auto& s : all) printAllocationRow(s);
    return 0;
}

bool matches(const Args& a, const TaskStats& s) {
    return a.task.empty() || (s.get<wire::kAllocId>() == a.task[0] && s.get<wire::kTask>() == a.task[1]);
}

void show(const Args& a, const TaskStats& s, bool watching) {
    if (a.json)
        printLine(toJson(s).dump());
    else if (watching || a.task.empty())
        printRow(s, watching);
    else
        printDetail(s);
}

}  // namespace

nlohmann::json allocationJson(const AllocationStats& a) { return toJson(a); }

std::string allocationLine(const AllocationStats& a) {
    const auto s = wire::taskShaped(a);
    std::string cpuTime = "-";
    if (has(s, wire::kCpuTotalUs)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f s used", static_cast<double>(s.get<wire::kCpuTotalUs>()) / 1e6);
        cpuTime = buf;
    }
    return "tasks " + std::to_string(std::get<wire::kTasks>(a)) + ", cpu " +
           percent(s, wire::kCpuPercent, s.get<wire::kCpuPercent>()) + " (" + cpuTime + "), memory " +
           bytes(s, wire::kMemoryUsage, s.get<wire::kMemoryUsage>()) + ", pids " +
           count(s, wire::kPids, s.get<wire::kPids>());
}

int statsCommand(sdbus::IConnection& conn, const std::vector<std::string>& args, bool json) {
    const Args a = parseArgs(args, json);
    bool headerDone = false;
    // Registered before anything is asked, so no sample slips between the
    // current one and the first signal.
    client::StatsProxy stats(conn);
    if (a.alloc) return allocationStats(a, stats);
    stats.onSampled = [&](const std::vector<TaskStats>& samples) {
        if (!a.watch) return;
        for (const auto& s : samples) {
            if (!matches(a, s)) continue;
            if (!a.json && !headerDone) {
                printHeader(true);
                headerDone = true;
            }
            show(a, s, true);
        }
    };

    if (a.interval) {
        if (a.task.empty())
            stats.DefaultIntervalMs(static_cast<uint64_t>(*a.interval));
        else
            stats.SetTaskInterval(a.task[0], a.task[1], *a.interval);
        if (!a.watch) return 0;
    }

    if (a.watch) {
        // Samples arrive as signals; nothing is polled.
        pumpUntil(conn, [] { return false; });
        return 0;
    }

    if (!a.task.empty()) {
        show(a, stats.GetTaskStats(a.task[0], a.task[1]), false);
        return 0;
    }
    const auto all = stats.GetAllStats();
    if (a.json) return printJsonArray(all);
    printHeader(false);
    for (const auto& s : all) printRow(s, false);
    return 0;
}

}  // namespace taskscope::cli
