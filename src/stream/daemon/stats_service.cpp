#include "stream/daemon/stats_service.hpp"

#include <sys/resource.h>

#include <spdlog/spdlog.h>

namespace taskscope::stream::daemon {

namespace {

constexpr const char* kIntervalsFile = "stats-intervals.json";

// Each task keeps up to 9 cgroup files open between samples (v1; 6 on v2),
// so thousands of tasks need more than the soft limit of 1024 that systemd
// gives services. The hard limit (524288 under systemd) is ours to use; the
// event loop uses poll(), not select(), so large fd numbers are fine.
void raiseFdLimit() {
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)::setrlimit(RLIMIT_NOFILE, &rl);
    }
}

}  // namespace

common::Result<std::unique_ptr<StatsService>> StatsService::create(common::EventLoop& loop,
                                                                   sdbus::IConnection& connection,
                                                                   ManagerClient& manager, const std::string& path,
                                                                   const StatsServiceOptions& options,
                                                                   const std::string& stateDir) {
    raiseFdLimit();
    auto reader = scope::CgroupStatsReader::open(options.cgroupRoot, scope::detectCgroupVersion(options.cgroupRoot));
    if (!reader) return reader.error().context("open the cgroup hierarchies");
    if (auto r = stats::checkStatsInterval(options.defaultIntervalMs, "--stats-interval-ms"); !r) return r.error();
    stats::StatsOptions so;
    so.defaultIntervalMs = options.defaultIntervalMs;
    if (!stateDir.empty()) {
        const auto file = stateDir + "/" + kIntervalsFile;
        auto kept = stats::loadStatsIntervals(file);
        if (!kept)
            spdlog::warn("Failed to load the stats intervals: {}; every task starts at the default of the options",
                         kept.error().message);
        so = stats::keptIn(std::move(so), file, kept ? std::move(*kept) : stats::KeptIntervals{});
    }
    auto service = std::unique_ptr<StatsService>(
        new StatsService(loop, connection, manager, path, std::move(*reader), std::move(so)));
    return service;
}

StatsService::StatsService(common::EventLoop& loop, sdbus::IConnection& connection, ManagerClient& manager,
                           const std::string& path, scope::CgroupStatsReader reader, stats::StatsOptions options)
    : sampler_(loop, std::move(reader), std::move(options)),
      object_(connection, path, sampler_),
      watch_(connection, manager, loop, sampler_) {
    sampler_.attach(object_);
}

StatsService::~StatsService() = default;

}  // namespace taskscope::stream::daemon
