// A task's CPU use converted to MHz for Nomad (cpu_compute.hpp).
#include "nomad/cpu_compute.hpp"

#include <cstdlib>
#include <sstream>

#include "common/cpu_list.hpp"
#include "common/files.hpp"

namespace taskscope::nomad {

namespace {

// A sysfs number (kHz or MHz), 0 when absent or not a number.
double readNumber(const std::string& path) {
    auto text = common::readFile(path);
    if (!text) return 0;
    char* end = nullptr;
    const double v = std::strtod(text->c_str(), &end);
    return end != text->c_str() && v > 0 ? v : 0;
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// numalib's discoverCoreSpeeds and Core.MHz for one CPU, in MHz.
double cpuMhz(const std::string& sys, unsigned cpu) {
    const std::string dir = sys + "/cpu" + std::to_string(cpu);
    auto driver = common::readFile(dir + "/cpufreq/scaling_driver");
    double base = 0;
    if (driver && trimmed(*driver) == "acpi-cpufreq") base = readNumber(dir + "/acpi_cppc/nominal_freq");  // MHz
    else base = readNumber(dir + "/cpufreq/base_frequency") / 1000;                                       // kHz
    if (base > 0) return base;
    return readNumber(dir + "/cpufreq/cpuinfo_max_freq") / 1000;  // kHz
}

// The first "cpu MHz : 2893.202" of /proc/cpuinfo.
double cpuinfoMhz(const std::string& cpuinfo) {
    auto text = common::readFile(cpuinfo);
    if (!text) return 0;
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("cpu MHz", 0) != 0) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const double v = std::strtod(line.c_str() + colon + 1, nullptr);
        if (v > 0) return v;
    }
    return 0;
}

}  // namespace

Compute computeFromTopology(const hashicorp::nomad::plugins::base::proto::ClientTopology& topology) {
    Compute c;
    c.cores = topology.cores_size();
    if (topology.override_total_compute() > 0) {
        c.totalMhz = static_cast<double>(topology.override_total_compute());
        return c;
    }
    for (const auto& core : topology.cores()) {
        const uint64_t mhz = core.base_speed() > 0  ? core.base_speed()
                             : core.max_speed() > 0 ? core.max_speed()
                                                    : core.guess_speed();
        c.totalMhz += static_cast<double>(mhz);
    }
    return c;
}

Compute hostCompute(const std::string& sys, const std::string& cpuinfo) {
    Compute c;
    auto online = common::readFile(sys + "/online");
    if (!online) return c;
    auto cpus = common::parseCpuList(*online);
    if (!cpus || cpus->empty()) return c;
    c.cores = static_cast<int>(cpus->size());
    for (unsigned cpu : *cpus) c.totalMhz += cpuMhz(sys, cpu);
    if (c.totalMhz <= 0) c.totalMhz = cpuinfoMhz(cpuinfo) * c.cores;
    return c;
}

double ticksConsumed(double percent, const Compute& compute) {
    if (!compute.known()) return 0;
    return percent / 100 * compute.totalMhz / compute.cores;
}

}  // namespace taskscope::nomad
