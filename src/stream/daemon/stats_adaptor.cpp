#include "stream/daemon/stats_adaptor.hpp"

#include "common/bus_error.hpp"

namespace taskscope::stream::daemon {

namespace {

using common::unwrapForBus;

}  // namespace

wire::TaskStats toWire(const stats::TaskSample& s) {
    wire::TaskStats w;
    uint64_t measured = 0;
    auto put = [&](wire::Field f, auto& into, const auto& value) {
        if (!value) return;
        into = *value;
        measured |= wire::bit(f);
    };
    w.get<wire::kAllocId>() = s.key.allocId;
    w.get<wire::kTask>() = s.key.task;
    w.get<wire::kTimestampUs>() = s.timestampUs;
    w.get<wire::kIntervalMs>() = s.intervalMs;
    const auto& st = s.stats;
    put(wire::kCpuUserUs, w.get<wire::kCpuUserUs>(), st.cpuUserUs);
    put(wire::kCpuSystemUs, w.get<wire::kCpuSystemUs>(), st.cpuSystemUs);
    put(wire::kCpuTotalUs, w.get<wire::kCpuTotalUs>(), st.cpuTotalUs);
    put(wire::kCpuPercent, w.get<wire::kCpuPercent>(), s.cpu.total);
    put(wire::kCpuUserPercent, w.get<wire::kCpuUserPercent>(), s.cpu.user);
    put(wire::kCpuSystemPercent, w.get<wire::kCpuSystemPercent>(), s.cpu.system);
    put(wire::kCpuThrottledPeriods, w.get<wire::kCpuThrottledPeriods>(), st.cpuThrottledPeriods);
    put(wire::kCpuThrottledTimeUs, w.get<wire::kCpuThrottledTimeUs>(), st.cpuThrottledTimeUs);
    put(wire::kMemoryRss, w.get<wire::kMemoryRss>(), st.memoryRss);
    put(wire::kMemoryCache, w.get<wire::kMemoryCache>(), st.memoryCache);
    put(wire::kMemorySwap, w.get<wire::kMemorySwap>(), st.memorySwap);
    put(wire::kMemoryUsage, w.get<wire::kMemoryUsage>(), st.memoryUsage);
    put(wire::kMemoryPeak, w.get<wire::kMemoryPeak>(), st.memoryPeak);
    put(wire::kMemoryKernel, w.get<wire::kMemoryKernel>(), st.memoryKernel);
    put(wire::kPids, w.get<wire::kPids>(), st.pids);
    if (s.cpu.reset) measured |= wire::kCountersReset;
    w.get<wire::kMeasured>() = measured;
    return w;
}

StatsObject::StatsObject(sdbus::IConnection& connection, std::string path, stats::StatsSampler& sampler)
    : AdaptorInterfaces(connection, std::move(path)), sampler_(sampler) {
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
    emitPropertiesChangedSignal(org::taskscope::Stats1_adaptor::INTERFACE_NAME, {"SampledTasks"});
}

void StatsObject::defaultIntervalChanged() {
    emitPropertiesChangedSignal(org::taskscope::Stats1_adaptor::INTERFACE_NAME, {"DefaultIntervalMs"});
}

wire::TaskStats StatsObject::GetTaskStats(const std::string& allocId, const std::string& task) {
    return toWire(unwrapForBus(sampler_.latest(stats::TaskKey{allocId, task})));
}

std::vector<wire::TaskStats> StatsObject::GetAllStats() {
    std::vector<wire::TaskStats> out;
    for (const auto& s : sampler_.latestAll()) out.push_back(toWire(s));
    return out;
}

void StatsObject::SetTaskInterval(const std::string& allocId, const std::string& task, const int64_t& intervalMs) {
    unwrapForBus(sampler_.setTaskInterval(stats::TaskKey{allocId, task}, intervalMs));
}

void StatsObject::DefaultIntervalMs(const uint64_t& value) { unwrapForBus(sampler_.setDefaultInterval(value)); }

}  // namespace taskscope::stream::daemon
