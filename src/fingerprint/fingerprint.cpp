#include "fingerprint/fingerprint.hpp"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

#include "common/cpu_list.hpp"
#include "common/files.hpp"
#include "common/error_names.hpp"
#include "scope/mount_table.hpp"

namespace taskscope::fingerprint {

namespace {

using common::Error;
using common::makeError;
using common::readFile;

// The mount point that decides the regime, as the mount table names it
// (a host path, not one below Roots::sys).
constexpr std::string_view kCgroupRoot = "/sys/fs/cgroup";
constexpr std::string_view kCpuDir = "/devices/system/cpu";
constexpr std::string_view kMaxFreqFile = "cpufreq/cpuinfo_max_freq";  // kHz

constexpr std::string_view kControllersFile = "cgroup.controllers";
constexpr std::string_view kEffectiveCpusV2 = "cpuset.cpus.effective";
constexpr std::string_view kEffectiveCpusV1 = "cpuset.effective_cpus";
constexpr std::string_view kCpusV1 = "cpuset.cpus";
constexpr std::string_view kFreezeFile = "cgroup.freeze";
// The root cgroup has no cgroup.freeze; these two exist under systemd on
// every v2 host, so their cgroup.freeze says whether the kernel can freeze.
constexpr std::string_view kFreezeProbeCgroups[] = {"init.scope", "system.slice"};

// Mount options of a v1 "cgroup" entry that name controllers. An allowlist,
// because the options also carry rw, relatime, name=systemd, xattr, ...
const std::set<std::string, std::less<>> kV1Controllers = {
    "blkio", "cpu",     "cpuacct", "cpuset",     "devices", "freezer", "hugetlb",
    "memory", "misc",   "net_cls", "net_prio",   "perf_event", "pids", "rdma",
};

constexpr std::string_view kSpace = " \t\n\r";
using common::trim;

std::vector<std::string_view> split(std::string_view s, std::string_view separators) {
    std::vector<std::string_view> out;
    size_t pos = 0;
    while (pos < s.size()) {
        const size_t start = s.find_first_not_of(separators, pos);
        if (start == std::string_view::npos) break;
        size_t end = s.find_first_of(separators, start);
        if (end == std::string_view::npos) end = s.size();
        out.push_back(s.substr(start, end - start));
        pos = end;
    }
    return out;
}

template <class T>
std::optional<T> parseNumber(std::string_view s) {
    T value{};
    const auto* end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, value);
    if (ec != std::errc() || ptr != end || s.empty()) return std::nullopt;
    return value;
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

bool isNotFound(const Error& e) { return e.name == common::errors::kNotFound; }

using scope::MountEntry;

// /proc/self/mounts is what this process sees; /proc/mounts is the same
// table on modern kernels and the only one in some minimal fixtures.
Result<std::vector<MountEntry>> readMounts(const Roots& roots) {
    std::string path = roots.proc + "/self/mounts";
    auto table = readFile(path);
    if (!table && isNotFound(table.error())) {
        path = roots.proc + "/mounts";
        table = readFile(path);
    }
    if (!table) return table.error().context("read mount table");
    return scope::parseMounts(*table, path);
}

// Mount points in the table name the real /sys; tests relocate it.
std::string underSys(const Roots& roots, const std::string& mountPoint) {
    if (mountPoint == "/sys") return roots.sys;
    if (mountPoint.starts_with("/sys/")) return roots.sys + mountPoint.substr(4);
    return mountPoint;
}

Result<std::set<unsigned>> readCpuList(const std::string& path) {
    auto text = readFile(path);
    if (!text) return text.error();
    auto cpus = common::parseCpuList(*text);
    if (!cpus) return cpus.error().context(path);
    return cpus;
}

// Reads the first of `names` that exists in `dir`; nullopt when none does.
Result<std::optional<std::set<unsigned>>> readFirstCpuList(const std::string& dir,
                                                           std::initializer_list<std::string_view> names) {
    for (auto name : names) {
        auto cpus = readCpuList(dir + "/" + std::string(name));
        if (cpus) return std::optional<std::set<unsigned>>(std::move(*cpus));
        if (!isNotFound(cpus.error())) return cpus.error();
    }
    return std::optional<std::set<unsigned>>();
}

Result<void> probeCgroupV2(const Roots& roots, Facts& facts) {
    const std::string root = underSys(roots, std::string(kCgroupRoot));
    facts.cgroupMountPoint = std::string(kCgroupRoot);

    const std::string controllersPath = root + "/" + std::string(kControllersFile);
    auto controllers = readFile(controllersPath);
    if (!controllers) return controllers.error().context("read cgroup controllers");
    for (auto c : split(*controllers, kSpace)) facts.controllers.emplace(c);

    for (auto cgroup : kFreezeProbeCgroups)
        if (exists(root + "/" + std::string(cgroup) + "/" + std::string(kFreezeFile))) facts.freezer = true;
    facts.cpuset = facts.controllers.contains("cpuset");

    auto effective = readFirstCpuList(root, {kEffectiveCpusV2});
    if (!effective) return effective.error().context("read usable CPUs");
    facts.usableCpus = effective->value_or(facts.onlineCpus);
    return {};
}

void probeCgroupV1(const Roots& roots, const std::vector<MountEntry>& mounts, Facts& facts) {
    const MountEntry* cpusetMount = nullptr;
    for (const auto& m : mounts) {
        if (m.fsType != "cgroup") continue;
        if (facts.cgroupMountPoint.empty()) {
            const auto slash = m.mountPoint.rfind('/');
            facts.cgroupMountPoint = slash == 0 || slash == std::string::npos ? "/" : m.mountPoint.substr(0, slash);
        }
        for (const auto& option : m.options)
            if (kV1Controllers.contains(option)) facts.controllers.insert(option);
        if (m.hasOption("cpuset")) cpusetMount = &m;
    }
    if (facts.cgroupMountPoint.empty())
        facts.notes.emplace_back("no cgroup hierarchy mounted: tasks cannot be limited, frozen or pinned");
    facts.freezer = facts.controllers.contains("freezer");
    facts.cpuset = cpusetMount != nullptr;

    facts.usableCpus = facts.onlineCpus;
    if (cpusetMount == nullptr) return;
    // v1 cpusets exist before cpuset.effective_cpus did (4.x kernels have
    // only cpuset.cpus); a cpuset we cannot read leaves every online CPU.
    auto cpus = readFirstCpuList(underSys(roots, cpusetMount->mountPoint), {kEffectiveCpusV1, kCpusV1});
    if (cpus && cpus->has_value())
        facts.usableCpus = **cpus;
    else
        facts.notes.emplace_back("cannot read the root cpuset" +
                                 (cpus ? std::string() : ": " + cpus.error().message) +
                                 "; counting every online CPU as usable");
}

// cpu MHz per "processor" block of /proc/cpuinfo. Architectures without the
// field (arm64) give an empty map.
std::map<unsigned, double> parseCpuinfoMhz(std::string_view cpuinfo) {
    std::map<unsigned, double> mhz;
    std::optional<unsigned> processor;
    for (auto line : split(cpuinfo, "\n")) {
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const auto key = trim(line.substr(0, colon));
        const auto value = trim(line.substr(colon + 1));
        if (key == "processor")
            processor = parseNumber<unsigned>(value);
        else if (key == "cpu MHz" && processor)
            if (auto v = parseNumber<double>(value)) mhz[*processor] = *v;
    }
    return mhz;
}

void probeCompute(const Roots& roots, Facts& facts) {
    std::optional<std::map<unsigned, double>> cpuinfoMhz;
    double total = 0;
    std::set<unsigned> unknown;
    for (unsigned cpu : facts.usableCpus) {
        // cpuinfo_max_freq is the core's rated maximum; cpuinfo's "cpu MHz"
        // is only the current clock, so it is the fallback (VMs lack cpufreq).
        const std::string maxFreq =
            roots.sys + std::string(kCpuDir) + "/cpu" + std::to_string(cpu) + "/" + std::string(kMaxFreqFile);
        if (auto text = readFile(maxFreq); text) {
            if (auto khz = parseNumber<std::uint64_t>(trim(*text))) {
                total += static_cast<double>(*khz) / 1000.0;
                continue;
            }
        }
        if (!cpuinfoMhz) {
            auto text = readFile(roots.proc + "/cpuinfo");
            cpuinfoMhz = text ? parseCpuinfoMhz(*text) : std::map<unsigned, double>();
        }
        if (auto it = cpuinfoMhz->find(cpu); it != cpuinfoMhz->end())
            total += it->second;
        else
            unknown.insert(cpu);
    }
    facts.totalComputeMhz = static_cast<std::uint64_t>(std::llround(total));
    if (!unknown.empty())
        facts.notes.push_back("no frequency known for CPU " + common::formatCpuList(unknown) +
                              "; left out of the total compute");
}

Result<std::uint64_t> readMemTotal(const Roots& roots) {
    const std::string path = roots.proc + "/meminfo";
    auto text = readFile(path);
    if (!text) return text.error().context("read memory size");
    for (auto line : split(*text, "\n")) {
        if (!line.starts_with("MemTotal:")) continue;
        const auto fields = split(line.substr(9), kSpace);
        // The kernel has printed "kB" (meaning KiB) here forever.
        if (fields.size() == 2 && fields[1] == "kB")
            if (auto kib = parseNumber<std::uint64_t>(fields[0])) return *kib * 1024;
        return makeError(common::errors::kInternal, path + ": malformed line '" + std::string(line) + "'");
    }
    return makeError(common::errors::kInternal, path + ": no MemTotal line");
}

Result<std::string> readKernelVersion(const Roots& roots) {
    const std::string path = roots.proc + "/sys/kernel/osrelease";
    auto text = readFile(path);
    if (!text) return text.error().context("read kernel version");
    const auto version = trim(*text);
    if (version.empty()) return makeError(common::errors::kInternal, path + " is empty");
    return std::string(version);
}

std::string join(const std::set<std::string>& items, std::string_view separator) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += separator;
        out += item;
    }
    return out;
}

const char* boolString(bool b) { return b ? "true" : "false"; }

}  // namespace

Result<Facts> probe(const Roots& roots, const ProbeOptions& options) {
    Facts facts;

    const std::string cpuDir = roots.sys + std::string(kCpuDir);
    auto present = readCpuList(cpuDir + "/present");
    if (!present) return present.error().context("read present CPUs");
    facts.presentCpus = std::move(*present);
    auto online = readCpuList(cpuDir + "/online");
    if (!online) return online.error().context("read online CPUs");
    facts.onlineCpus = std::move(*online);

    auto mounts = readMounts(roots);
    if (!mounts) return mounts.error();
    // The last entry for a mount point is the one on top, the one visible.
    const MountEntry* top = nullptr;
    for (const auto& m : *mounts)
        if (m.mountPoint == kCgroupRoot) top = &m;
    facts.cgroupVersion = top != nullptr ? scope::versionOfRootMount(top->fsType) : CgroupVersion::V1;

    if (facts.cgroupVersion == CgroupVersion::V2) {
        if (auto r = probeCgroupV2(roots, facts); !r) return r.error();
    } else {
        probeCgroupV1(roots, *mounts, facts);
    }
    if (!facts.cpuset) facts.notes.emplace_back("no cpuset controller: tasks cannot be pinned to cores");
    // A CPU in the cpuset that is offline cannot run anything.
    std::erase_if(facts.usableCpus, [&](unsigned cpu) { return !facts.onlineCpus.contains(cpu); });

    facts.reservableCpus = facts.usableCpus;
    for (unsigned cpu : options.reservedForSystem) facts.reservableCpus.erase(cpu);

    probeCompute(roots, facts);

    auto memory = readMemTotal(roots);
    if (!memory) return memory.error();
    facts.memoryTotalBytes = *memory;

    auto kernel = readKernelVersion(roots);
    if (!kernel) return kernel.error();
    facts.kernelVersion = std::move(*kernel);

    return facts;
}

nlohmann::json toJson(const Facts& facts, const std::string& systemdVersion) {
    const bool v2 = facts.cgroupVersion == CgroupVersion::V2;
    nlohmann::json j = nlohmann::json::object();
    j["unique.cgroups.version"] = v2 ? "v2" : "v1";
    j["os.cgroups.version"] = v2 ? "2" : "1";
    if (!facts.cgroupMountPoint.empty()) j["unique.cgroup.mountpoint"] = facts.cgroupMountPoint;
    j["cgroups.controllers"] = join(facts.controllers, ",");
    j["cgroups.freezer"] = boolString(facts.freezer);
    j["cgroups.cpuset"] = boolString(facts.cpuset);
    j["cpu.totalcores"] = std::to_string(facts.presentCpus.size());
    j["cpu.onlinecores"] = std::to_string(facts.onlineCpus.size());
    j["cpu.usablecores"] = std::to_string(facts.usableCpus.size());
    j["cpu.reservablecores"] = std::to_string(facts.reservableCpus.size());
    j["cpu.usable_cpuset"] = common::formatCpuList(facts.usableCpus);
    j["cpu.totalcompute"] = std::to_string(facts.totalComputeMhz);
    j["memory.totalbytes"] = std::to_string(facts.memoryTotalBytes);
    j["kernel.version"] = facts.kernelVersion;
    if (!systemdVersion.empty()) j["systemd.version"] = systemdVersion;
    return j;
}

}  // namespace taskscope::fingerprint
