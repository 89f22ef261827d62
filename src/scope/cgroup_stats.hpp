#pragma once
// Reading a task's resource usage from its cgroup files, on cgroup v2 (one
// unified hierarchy) or v1 (one hierarchy per controller, the same relative
// path in each). Which files are read, and from which hierarchy, is a table
// chosen by the version: the strategy is data, and the one reader serves
// both. Files stay open between samples and are read with pread() at
// offset 0, which makes the kernel regenerate a cgroup file's contents, so
// a sample costs one syscall per file and no path lookups.
//
// A file that does not exist (its controller is not enabled for the task,
// or the kernel lacks it) leaves its values unmeasured; it is never an
// error. Nothing here logs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "scope/cgroup_host.hpp"
#include "scope/cgroup_path.hpp"

namespace taskscope::scope {

/// One sample's raw values; unset when not measured.
struct CgroupStats {
    std::optional<uint64_t> cpuUserUs;
    std::optional<uint64_t> cpuSystemUs;
    std::optional<uint64_t> cpuTotalUs;
    std::optional<uint64_t> cpuThrottledPeriods;
    std::optional<uint64_t> cpuThrottledTimeUs;
    std::optional<uint64_t> memoryRss;     ///< anonymous memory, bytes
    std::optional<uint64_t> memoryCache;   ///< page cache, bytes
    std::optional<uint64_t> memorySwap;    ///< bytes
    std::optional<uint64_t> memoryUsage;   ///< charged to the cgroup, bytes
    std::optional<uint64_t> memoryPeak;    ///< highest memoryUsage, bytes
    std::optional<uint64_t> memoryKernel;  ///< bytes
    std::optional<uint64_t> pids;
};

/// The cgroup files stats come from. V1 files live in the hierarchy of
/// their controller (statFileController()).
enum class StatFile {
    V2CpuStat,            ///< cpu.stat: usage/user/system_usec, nr_throttled, throttled_usec
    V2MemoryCurrent,      ///< memory.current
    V2MemoryStat,         ///< memory.stat: anon, file, kernel
    V2MemorySwapCurrent,  ///< memory.swap.current
    V2MemoryPeak,         ///< memory.peak
    V2PidsCurrent,        ///< pids.current
    V1CpuacctUsage,       ///< cpuacct.usage, ns
    V1CpuacctStat,        ///< cpuacct.stat: user, system in USER_HZ ticks
    V1CpuStat,            ///< cpu.stat: nr_throttled, throttled_time (ns)
    V1MemoryUsage,        ///< memory.usage_in_bytes
    V1MemoryMaxUsage,     ///< memory.max_usage_in_bytes
    V1MemoryStat,         ///< memory.stat: total_rss/rss, total_cache/cache, total_swap/swap
    V1KmemUsage,          ///< memory.kmem.usage_in_bytes
    V1PidsCurrent,        ///< pids.current
};

/// A cgroup file's single number ("100\n"); nullopt for anything else.
std::optional<uint64_t> parseU64(std::string_view text);

/// The file's name in its cgroup directory.
const char* statFileName(StatFile file);
/// The v1 hierarchy (directory below the root) that holds the file; "" on v2.
const char* statFileController(StatFile file);
/// The files read on `version`, in reading order.
const std::vector<StatFile>& statFiles(CgroupVersion version);

/// Adds what one file's text says to `stats`. Keys a file does not have
/// stay unset; false when the text is malformed (then nothing is set).
/// ticksPerSecond converts cpuacct.stat's USER_HZ ticks.
bool parseStatFile(StatFile file, std::string_view text, CgroupStats& stats, long ticksPerSecond);

/// The open files of one task's cgroup. Move-only; closing is destruction.
class CgroupFiles {
public:
    CgroupFiles() = default;
    CgroupFiles(CgroupFiles&&) = default;
    CgroupFiles& operator=(CgroupFiles&&) = default;

    /// Files that did not exist when the cgroup was opened.
    const std::vector<StatFile>& missing() const { return missing_; }
    size_t openCount() const { return open_.size(); }
    /// How often memory.stat was really read (see setMemoryStatEvery()).
    uint64_t memoryStatReads() const { return statReads_; }

private:
    friend class CgroupStatsReader;
    std::vector<std::pair<StatFile, common::UniqueFd>> open_;
    std::vector<StatFile> missing_;
    // memory.stat's values at its last read, and the memory usage then.
    CgroupStats statValues_;
    std::optional<uint64_t> statUsage_;
    bool statValid_ = false;
    unsigned statSkipped_ = 0;
    uint64_t statReads_ = 0;
};

class CgroupStatsReader {
public:
    /// Opens the hierarchies below `root` (default /sys/fs/cgroup) for
    /// `version`. On v1 a hierarchy that is not mounted leaves its files
    /// unmeasured. Fails when `root` cannot be opened.
    static common::Result<CgroupStatsReader> open(const std::string& root, CgroupVersion version,
                                                  long ticksPerSecond = 0 /* sysconf(_SC_CLK_TCK) */);

    CgroupStatsReader(CgroupStatsReader&&) = default;
    CgroupStatsReader& operator=(CgroupStatsReader&&) = default;

    CgroupVersion version() const { return version_; }

    /// memory.stat is by far the costliest file (the kernel formats ~50
    /// counters for it: half of a sample's CPU time). It is read again
    /// only when the memory usage (memory.current, memory.usage_in_bytes)
    /// changed since its last read, and at least every `samples` samples;
    /// in between its values are the last ones read. Usage is charged in
    /// per-CPU batches, so a breakdown can lag by that much (<= 64 pages
    /// per CPU) for at most `samples` samples. 1 reads it every time.
    void setMemoryStatEvery(unsigned samples) { memoryStatEvery_ = samples ? samples : 1; }

    /// Opens the cgroup's files. NotFound when the cgroup exists in no
    /// hierarchy (it was removed, or never created).
    common::Result<CgroupFiles> openCgroup(const CgroupPath& cgroup) const;

    /// Reads every open file once. "Gone" when no file could be read
    /// because the cgroup was removed (the kernel answers ENODEV): the
    /// caller opens it anew later, and may find a recreated cgroup.
    common::Result<CgroupStats> read(CgroupFiles& files);

private:
    CgroupStatsReader() = default;

    struct Hierarchy {
        std::string controller;  ///< "" on v2
        common::UniqueFd dir;    ///< invalid when not mounted
    };

    CgroupVersion version_ = CgroupVersion::V2;
    long ticksPerSecond_ = 100;
    unsigned memoryStatEvery_ = 10;
    std::vector<Hierarchy> hierarchies_;
    std::vector<char> buffer_;
};

}  // namespace taskscope::scope
