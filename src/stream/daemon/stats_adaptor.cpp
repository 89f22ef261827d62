#include "stream/daemon/stats_adaptor.hpp"

#include "common/bus_error.hpp"
#include "common/sdbus_compat.hpp"

namespace taskscope::stream::daemon {

using common::unwrapForBus;

namespace {

// The values of a sample (a task's or an allocation's) into TaskStats.
wire::TaskStats values(const std::string& allocId, const std::string& task, uint64_t timestampUs, uint64_t intervalMs,
                       const scope::CgroupStats& st, const stats::CpuPercent& cpu) {
    wire::TaskStats w;
    uint64_t measured = 0;
    auto put = [&](wire::Field f, auto& into, const auto& value) {
        if (!value) return;
        into = *value;
        measured |= wire::bit(f);
    };
    w.get<wire::kAllocId>() = allocId;
    w.get<wire::kTask>() = task;
    w.get<wire::kTimestampUs>() = timestampUs;
    w.get<wire::kIntervalMs>() = intervalMs;
    put(wire::kCpuUserUs, w.get<wire::kCpuUserUs>(), st.cpuUserUs);
    put(wire::kCpuSystemUs, w.get<wire::kCpuSystemUs>(), st.cpuSystemUs);
    put(wire::kCpuTotalUs, w.get<wire::kCpuTotalUs>(), st.cpuTotalUs);
    put(wire::kCpuPercent, w.get<wire::kCpuPercent>(), cpu.total);
    put(wire::kCpuUserPercent, w.get<wire::kCpuUserPercent>(), cpu.user);
    put(wire::kCpuSystemPercent, w.get<wire::kCpuSystemPercent>(), cpu.system);
    put(wire::kCpuThrottledPeriods, w.get<wire::kCpuThrottledPeriods>(), st.cpuThrottledPeriods);
    put(wire::kCpuThrottledTimeUs, w.get<wire::kCpuThrottledTimeUs>(), st.cpuThrottledTimeUs);
    put(wire::kMemoryRss, w.get<wire::kMemoryRss>(), st.memoryRss);
    put(wire::kMemoryCache, w.get<wire::kMemoryCache>(), st.memoryCache);
    put(wire::kMemorySwap, w.get<wire::kMemorySwap>(), st.memorySwap);
    put(wire::kMemoryUsage, w.get<wire::kMemoryUsage>(), st.memoryUsage);
    put(wire::kMemoryPeak, w.get<wire::kMemoryPeak>(), st.memoryPeak);
    put(wire::kMemoryKernel, w.get<wire::kMemoryKernel>(), st.memoryKernel);
    put(wire::kPids, w.get<wire::kPids>(), st.pids);
    if (cpu.reset) measured |= wire::kCountersReset;
    w.get<wire::kMeasured>() = measured;
    return w;
}

}  // namespace

wire::TaskStats toWire(const stats::TaskSample& s) {
    return values(s.key.allocId, s.key.task, s.timestampUs, s.intervalMs, s.stats, s.cpu);
}

wire::AllocationStats toWire(const stats::AllocationSample& s) {
    return wire::allocationStats(values(s.allocId, {}, s.timestampUs, s.intervalMs, s.stats, s.cpu), s.slices,
                                 s.tasks);
}

StatsObject::StatsObject(sdbus::IConnection& connection, std::string path, stats::StatsSampler& sampler)
    : AdaptorInterfaces(connection, sdbus::ObjectPath{std::move(path)}), sampler_(sampler) {
    registerAdaptor();
}

StatsObject::~StatsObject() { unregisterAdaptor(); }

void StatsObject::samplesTaken(const std::vector<stats::TaskSample>& samples) {
    std::vector<wire::TaskStats> out;
    out.reserve(samples.size());
    for (const auto& s : samples) out.push_back(toWire(s));
    emitSamples(out);
}

void StatsObject::tasksChanged() {
    sdbus_compat::emitPropertiesChanged(getObject(), org::taskscope::Stats1_adaptor::INTERFACE_NAME, {"SampledTasks"});
}

void StatsObject::defaultIntervalChanged() {
    sdbus_compat::emitPropertiesChanged(getObject(), org::taskscope::Stats1_adaptor::INTERFACE_NAME,
                                        {"DefaultIntervalMs"});
}

wire::TaskStats StatsObject::GetTaskStats(const std::string& allocId, const std::string& task) {
    return toWire(unwrapForBus(sampler_.latest(stats::TaskKey{allocId, task})));
}

std::vector<wire::TaskStats> StatsObject::GetAllStats() {
    std::vector<wire::TaskStats> out;
    for (const auto& s : sampler_.latestAll()) out.push_back(toWire(s));
    return out;
}

wire::AllocationStats StatsObject::GetAllocationStats(const std::string& allocId) {
    return toWire(unwrapForBus(sampler_.latestAllocation(allocId)));
}

std::vector<wire::AllocationStats> StatsObject::GetAllAllocationStats() {
    std::vector<wire::AllocationStats> out;
    for (const auto& s : sampler_.latestAllAllocations()) out.push_back(toWire(s));
    return out;
}

void StatsObject::SetTaskInterval(const std::string& allocId, const std::string& task, const int64_t& intervalMs) {
    unwrapForBus(sampler_.setTaskInterval(stats::TaskKey{allocId, task}, intervalMs));
}

void StatsObject::DefaultIntervalMs(const uint64_t& value) { unwrapForBus(sampler_.setDefaultInterval(value)); }

}  // namespace taskscope::stream::daemon
