// A task's usage read from its cgroup files, per cgroup version
// (cgroup_stats.hpp).
#include "scope/cgroup_stats.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <array>
#include <map>

#include "common/files.hpp"
#include "common/error_names.hpp"

namespace taskscope::scope {

namespace {

using common::UniqueFd;

constexpr size_t kInitialBuffer = 16 << 10;  // memory.stat is ~1.5 KiB on 6.1
constexpr size_t kMaxBuffer = 1 << 20;
constexpr uint64_t kNsPerUs = 1000;

struct FileInfo {
    StatFile file;
    const char* controller;
    const char* name;
};

// The strategy table: which file, in which hierarchy, per version.
constexpr FileInfo kFiles[] = {
    {StatFile::V2CpuStat, "", "cpu.stat"},
    {StatFile::V2MemoryCurrent, "", "memory.current"},
    {StatFile::V2MemoryStat, "", "memory.stat"},
    {StatFile::V2MemorySwapCurrent, "", "memory.swap.current"},
    {StatFile::V2MemoryPeak, "", "memory.peak"},
    {StatFile::V2PidsCurrent, "", "pids.current"},
    {StatFile::V1CpuacctUsage, "cpuacct", "cpuacct.usage"},
    {StatFile::V1CpuacctStat, "cpuacct", "cpuacct.stat"},
    {StatFile::V1CpuStat, "cpu", "cpu.stat"},
    {StatFile::V1MemoryUsage, "memory", "memory.usage_in_bytes"},
    {StatFile::V1MemoryMaxUsage, "memory", "memory.max_usage_in_bytes"},
    {StatFile::V1MemoryStat, "memory", "memory.stat"},
    {StatFile::V1KmemUsage, "memory", "memory.kmem.usage_in_bytes"},
    {StatFile::V1PidsCurrent, "pids", "pids.current"},
};

// v1 hierarchies sit at <root>/<controller>, where systemd itself looks
// for them (co-mounted ones such as cpu,cpuacct through symlinks).
constexpr const char* kV1Controllers[] = {"cpuacct", "cpu", "memory", "pids"};

const FileInfo& info(StatFile file) {
    for (const auto& f : kFiles)
        if (f.file == file) return f;
    return kFiles[0];  // unreachable: every enumerator is in the table
}

// The wanted keys of a "key value" file (cpu.stat, memory.stat), by index.
// Runs at every sample of every task, so it allocates nothing: memory.stat
// has ~50 lines and at most 9 are wanted. false when a line has no value,
// or a wanted one no number.
template <size_t N>
bool scanKeyed(std::string_view text, const std::array<std::string_view, N>& keys,
               std::array<std::optional<uint64_t>, N>& out) {
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const auto line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        if (line.empty()) continue;
        const auto sp = line.find(' ');
        if (sp == std::string_view::npos || sp == 0) return false;
        const auto key = line.substr(0, sp);
        for (size_t i = 0; i < N; ++i) {
            if (key != keys[i]) continue;
            out[i] = parseU64(line.substr(sp + 1));
            if (!out[i]) return false;
            break;
        }
    }
    return true;
}

std::optional<uint64_t> divide(std::optional<uint64_t> v, uint64_t by) {
    if (!v) return std::nullopt;
    return *v / by;
}

std::optional<uint64_t> firstOf(const std::optional<uint64_t>& preferred, const std::optional<uint64_t>& fallback) {
    return preferred ? preferred : fallback;
}

bool parseSingle(std::string_view text, std::optional<uint64_t>& into) {
    auto v = parseU64(text);
    if (!v) return false;
    into = v;
    return true;
}

}  // namespace

std::optional<uint64_t> parseU64(std::string_view s) {
    s = common::trim(s);
    uint64_t v = 0;
    const auto* end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, v);
    if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
    return v;
}

const char* statFileName(StatFile file) { return info(file).name; }
const char* statFileController(StatFile file) { return info(file).controller; }

const std::vector<StatFile>& statFiles(CgroupVersion version) {
    static const std::vector<StatFile> v2 = [] {
        std::vector<StatFile> out;
        for (const auto& f : kFiles)
            if (!*f.controller) out.push_back(f.file);
        return out;
    }();
    static const std::vector<StatFile> v1 = [] {
        std::vector<StatFile> out;
        for (const auto& f : kFiles)
            if (*f.controller) out.push_back(f.file);
        return out;
    }();
    return version == CgroupVersion::V2 ? v2 : v1;
}

bool parseStatFile(StatFile file, std::string_view text, CgroupStats& s, long ticksPerSecond) {
    switch (file) {
        case StatFile::V2MemoryCurrent:
        case StatFile::V1MemoryUsage:
            return parseSingle(text, s.memoryUsage);
        case StatFile::V2MemorySwapCurrent:
            return parseSingle(text, s.memorySwap);
        case StatFile::V2MemoryPeak:
        case StatFile::V1MemoryMaxUsage:
            return parseSingle(text, s.memoryPeak);
        case StatFile::V2PidsCurrent:
        case StatFile::V1PidsCurrent:
            return parseSingle(text, s.pids);
        case StatFile::V1KmemUsage:
            return parseSingle(text, s.memoryKernel);
        case StatFile::V1CpuacctUsage: {
            std::optional<uint64_t> ns;
            if (!parseSingle(text, ns)) return false;
            s.cpuTotalUs = *ns / kNsPerUs;
            return true;
        }
        default:
            break;
    }
    switch (file) {
        case StatFile::V2CpuStat: {
            static constexpr std::array<std::string_view, 5> keys{"usage_usec", "user_usec", "system_usec",
                                                                  "nr_throttled", "throttled_usec"};
            std::array<std::optional<uint64_t>, 5> v;
            if (!scanKeyed(text, keys, v)) return false;
            s.cpuTotalUs = v[0];
            s.cpuUserUs = v[1];
            s.cpuSystemUs = v[2];
            // Only with the cpu controller enabled for the cgroup.
            s.cpuThrottledPeriods = v[3];
            s.cpuThrottledTimeUs = v[4];
            return true;
        }
        case StatFile::V2MemoryStat: {
            static constexpr std::array<std::string_view, 9> keys{
                "anon", "file", "kernel", "kernel_stack", "pagetables", "percpu", "sock", "vmalloc", "slab"};
            std::array<std::optional<uint64_t>, 9> v;
            if (!scanKeyed(text, keys, v)) return false;
            s.memoryRss = v[0];
            s.memoryCache = v[1];
            s.memoryKernel = v[2];
            // Kernels before 5.18 have no "kernel" line; its parts add up to it.
            if (!v[2] && v[3] && v[8]) {
                uint64_t sum = 0;
                for (size_t i = 3; i < 9; ++i) sum += v[i].value_or(0);
                s.memoryKernel = sum;
            }
            return true;
        }
        case StatFile::V1CpuacctStat: {
            static constexpr std::array<std::string_view, 2> keys{"user", "system"};
            std::array<std::optional<uint64_t>, 2> v;
            if (!scanKeyed(text, keys, v)) return false;
            const auto tps = static_cast<uint64_t>(ticksPerSecond > 0 ? ticksPerSecond : 100);
            auto us = [tps](std::optional<uint64_t> ticks) -> std::optional<uint64_t> {
                if (!ticks) return std::nullopt;
                return *ticks * 1000000 / tps;
            };
            s.cpuUserUs = us(v[0]);
            s.cpuSystemUs = us(v[1]);
            return true;
        }
        case StatFile::V1CpuStat: {
            static constexpr std::array<std::string_view, 2> keys{"nr_throttled", "throttled_time"};
            std::array<std::optional<uint64_t>, 2> v;
            if (!scanKeyed(text, keys, v)) return false;
            s.cpuThrottledPeriods = v[0];
            s.cpuThrottledTimeUs = divide(v[1], kNsPerUs);
            return true;
        }
        case StatFile::V1MemoryStat: {
            // The total_ lines include descendants; a scope's processes may
            // sit in child cgroups of it. swap only with swap accounting.
            static constexpr std::array<std::string_view, 6> keys{"total_rss",  "rss",        "total_cache",
                                                                  "cache",      "total_swap", "swap"};
            std::array<std::optional<uint64_t>, 6> v;
            if (!scanKeyed(text, keys, v)) return false;
            s.memoryRss = firstOf(v[0], v[1]);
            s.memoryCache = firstOf(v[2], v[3]);
            s.memorySwap = firstOf(v[4], v[5]);
            return true;
        }
        default:
            return false;
    }
}

common::Result<CgroupStatsReader> CgroupStatsReader::open(const std::string& root, CgroupVersion version,
                                                          long ticksPerSecond) {
    UniqueFd rootFd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!rootFd) return common::errnoError("open cgroup root " + root, errno, common::errors::kNotFound);
    CgroupStatsReader r;
    r.version_ = version;
    r.ticksPerSecond_ = ticksPerSecond > 0 ? ticksPerSecond : ::sysconf(_SC_CLK_TCK);
    if (r.ticksPerSecond_ <= 0) r.ticksPerSecond_ = 100;
    if (version == CgroupVersion::V2) {
        r.hierarchies_.push_back({"", std::move(rootFd)});
    } else {
        for (const char* c : kV1Controllers)
            r.hierarchies_.push_back({c, UniqueFd(::openat(rootFd.get(), c, O_PATH | O_DIRECTORY | O_CLOEXEC))});
    }
    r.buffer_.resize(kInitialBuffer);
    return r;
}

common::Result<CgroupFiles> CgroupStatsReader::openCgroup(const CgroupPath& cgroup) const {
    const auto rel = cgroup.relative();
    std::map<std::string, UniqueFd> dirs;  // by controller
    for (const auto& h : hierarchies_) {
        if (!h.dir) continue;
        UniqueFd d(::openat(h.dir.get(), rel.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (d) dirs.emplace(h.controller, std::move(d));
    }
    if (dirs.empty())
        return common::makeError(common::errors::kNotFound, "cgroup " + cgroup.str() + " exists in no " + toString(version_) +
                                                 " hierarchy");
    CgroupFiles files;
    for (StatFile f : statFiles(version_)) {
        const auto d = dirs.find(statFileController(f));
        if (d == dirs.end()) {
            files.missing_.push_back(f);
            continue;
        }
        UniqueFd fd(::openat(d->second.get(), statFileName(f), O_RDONLY | O_CLOEXEC));
        if (fd)
            files.open_.emplace_back(f, std::move(fd));
        else
            files.missing_.push_back(f);
    }
    return files;
}

common::Result<CgroupStats> CgroupStatsReader::read(CgroupFiles& files) {
    CgroupStats stats;
    auto merge = [](const CgroupStats& from, CgroupStats& into) {
        for (auto field : {&CgroupStats::memoryRss, &CgroupStats::memoryCache, &CgroupStats::memorySwap,
                           &CgroupStats::memoryKernel})
            if (from.*field) into.*field = from.*field;
    };
    for (auto& [file, fd] : files.open_) {
        const bool memoryStat = file == StatFile::V2MemoryStat || file == StatFile::V1MemoryStat;
        // The usage file comes before memory.stat in the table: its value
        // says whether memory.stat can have changed.
        if (memoryStat && files.statValid_ && stats.memoryUsage && files.statUsage_ == stats.memoryUsage &&
            files.statSkipped_ + 1 < memoryStatEvery_) {
            ++files.statSkipped_;
            merge(files.statValues_, stats);
            continue;
        }
        ssize_t n;
        for (;;) {
            n = ::pread(fd.get(), buffer_.data(), buffer_.size(), 0);
            if (n < 0 && errno == EINTR) continue;
            // A full buffer may have cut the file short: read it again, larger.
            if (n == static_cast<ssize_t>(buffer_.size()) && buffer_.size() < kMaxBuffer) {
                buffer_.resize(buffer_.size() * 2);
                continue;
            }
            break;
        }
        if (n < 0) {
            // A removed cgroup's files answer ENODEV: this cgroup is dead,
            // whatever a reopen may find.
            if (errno == ENODEV) return common::makeError(common::errors::kGone, "the cgroup was removed");
            continue;  // unmeasured, like a missing file
        }
        const std::string_view text(buffer_.data(), static_cast<size_t>(n));
        if (!memoryStat) {
            // Each file fills its own values, and a malformed one none.
            (void)parseStatFile(file, text, stats, ticksPerSecond_);
            continue;
        }
        CgroupStats values;
        files.statValid_ = parseStatFile(file, text, values, ticksPerSecond_);
        files.statValues_ = values;
        files.statUsage_ = stats.memoryUsage;
        files.statSkipped_ = 0;
        ++files.statReads_;
        merge(values, stats);
    }
    return stats;
}

}  // namespace taskscope::scope
