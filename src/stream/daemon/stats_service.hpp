#pragma once
// Stats in taskscope-streamer, assembled: the cgroup reader for this host,
// the sampler, org.taskscope.Stats1 on the streamer's object path and the
// watch on taskscope-manager that tells the sampler which tasks run.

#include <memory>
#include <string>

#include <sdbus-c++/sdbus-c++.h>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "stream/daemon/manager_watch.hpp"
#include "stream/daemon/stats_adaptor.hpp"
#include "stream/stats/stats_sampler.hpp"

namespace taskscope::stream::daemon {

struct StatsServiceOptions {
    uint64_t defaultIntervalMs = 1000;
    std::string cgroupRoot = "/sys/fs/cgroup";
};

class StatsService {
public:
    /// Opens the cgroup hierarchies, loads the per-task intervals kept in
    /// stateDir and publishes org.taskscope.Stats1 at `path`.
    static common::Result<std::unique_ptr<StatsService>> create(common::EventLoop& loop, sdbus::IConnection& connection,
                                                                ManagerClient& manager, const std::string& path,
                                                                const StatsServiceOptions& options,
                                                                const std::string& stateDir);
    ~StatsService();

    /// Starts following taskscope-manager's tasks; roster, when given,
    /// hears which tasks the manager has and which it forgets.
    void start(TaskRoster* roster = nullptr) { watch_.start(roster); }

private:
    StatsService(common::EventLoop& loop, sdbus::IConnection& connection, ManagerClient& manager,
                 const std::string& path, scope::CgroupStatsReader reader, stats::StatsOptions options);

    stats::StatsSampler sampler_;
    StatsObject object_;
    ManagerWatch watch_;
};

}  // namespace taskscope::stream::daemon
