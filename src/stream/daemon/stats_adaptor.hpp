#pragma once
// org.taskscope.Stats1 (dbus/org.taskscope.Stats1.xml) on the streamer's
// object path, beside org.taskscope.Streamer1: converts types and errors,
// nothing more.

#include <sdbus-c++/sdbus-c++.h>

#include <string>
#include <vector>

#include "dbus/stats1_adaptor.h"
#include "stream/stats/stats_sampler.hpp"
#include "wire/stats_wire.hpp"

namespace taskscope::stream::daemon {

/// The sample as it crosses the bus.
wire::TaskStats toWire(const stats::TaskSample& sample);
/// An allocation's totals as they cross the bus.
wire::AllocationStats toWire(const stats::AllocationSample& sample);

class StatsObject final : public sdbus::AdaptorInterfaces<org::taskscope::Stats1_adaptor, sdbus::Properties_adaptor>,
                          public stats::StatsEvents {
public:
    StatsObject(sdbus::IConnection& connection, std::string path, stats::StatsSampler& sampler);
    ~StatsObject();
    StatsObject(const StatsObject&) = delete;
    StatsObject& operator=(const StatsObject&) = delete;

    // stats::StatsEvents
    void samplesTaken(const std::vector<stats::TaskSample>& samples) override;
    void tasksChanged() override;
    void defaultIntervalChanged() override;

private:
    wire::TaskStats GetTaskStats(const std::string& allocId, const std::string& task) override;
    std::vector<wire::TaskStats> GetAllStats() override;
    wire::AllocationStats GetAllocationStats(const std::string& allocId) override;
    std::vector<wire::AllocationStats> GetAllAllocationStats() override;
    void SetTaskInterval(const std::string& allocId, const std::string& task, const int64_t& intervalMs) override;
    uint64_t DefaultIntervalMs() override { return sampler_.defaultIntervalMs(); }
    void DefaultIntervalMs(const uint64_t& value) override;
    uint64_t MinIntervalMs() override { return stats::kMinStatsIntervalMs; }
    uint64_t MaxIntervalMs() override { return stats::kMaxStatsIntervalMs; }
    uint32_t SampledTasks() override { return sampler_.taskCount(); }
    std::string CgroupVersion() override { return toString(sampler_.cgroupVersion()); }

    stats::StatsSampler& sampler_;
};

}  // namespace taskscope::stream::daemon
