// Fuzz target: the cgroup files the stats sampler reads
// (scope::parseStatFile, scope::parseU64). The first byte picks the file;
// the rest is its text. Properties: no crash or hang; a text it calls
// malformed sets nothing (its promise: the sample keeps the last values).

#include "scope/cgroup_stats.hpp"
#include "fuzz_support.hpp"

using namespace taskscope;

namespace {

constexpr int kFiles = static_cast<int>(scope::StatFile::V1PidsCurrent) + 1;

bool same(const scope::CgroupStats& a, const scope::CgroupStats& b) {
    return a.cpuUserUs == b.cpuUserUs && a.cpuSystemUs == b.cpuSystemUs && a.cpuTotalUs == b.cpuTotalUs &&
           a.cpuThrottledPeriods == b.cpuThrottledPeriods && a.cpuThrottledTimeUs == b.cpuThrottledTimeUs &&
           a.memoryRss == b.memoryRss && a.memoryCache == b.memoryCache && a.memorySwap == b.memorySwap &&
           a.memoryUsage == b.memoryUsage && a.memoryPeak == b.memoryPeak && a.memoryKernel == b.memoryKernel &&
           a.pids == b.pids;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const auto file = static_cast<scope::StatFile>(data[0] % kFiles);
    const auto text = fuzz::text(data + 1, size - 1);
    scope::CgroupStats stats;
    if (!scope::parseStatFile(file, text, stats, 100)) fuzz::check(same(stats, {}), "a malformed file set a value");
    (void)scope::parseU64(text);
    return 0;
}
