#define BOOST_TEST_MODULE cpu_compute
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "nomad/cpu_compute.hpp"

namespace base = hashicorp::nomad::plugins::base::proto;
namespace fs = std::filesystem;
using namespace taskscope::nomad;

namespace {

struct Tree {
    fs::path root = fs::temp_directory_path() / ("cpu_compute." + std::to_string(::getpid()));
    Tree() { fs::create_directories(root); }
    ~Tree() { fs::remove_all(root); }
    void write(const std::string& rel, const std::string& text) {
        fs::create_directories((root / rel).parent_path());
        std::ofstream(root / rel) << text;
    }
    std::string sys() const { return (root / "cpu").string(); }
    std::string cpuinfo() const { return (root / "cpuinfo").string(); }
};

base::ClientTopologyCore* core(base::ClientTopology& t, uint64_t baseMhz, uint64_t maxMhz, uint64_t guess) {
    auto* c = t.add_cores();
    c->set_base_speed(baseMhz);
    c->set_max_speed(maxMhz);
    c->set_guess_speed(guess);
    return c;
}

}  // namespace

// client/lib/numalib/topology.go: Core.MHz is base, else max, else guess;
// TotalCompute their sum (disabled cores too), unless overridden.
BOOST_AUTO_TEST_CASE(topology_as_nomad_sums_it) {
    base::ClientTopology t;
    core(t, 2000, 3500, 0);
    core(t, 0, 3000, 0);
    core(t, 0, 0, 1500)->set_disable(true);
    auto c = computeFromTopology(t);
    BOOST_TEST(c.cores == 3);
    BOOST_TEST(c.totalMhz == 6500);
    t.set_override_total_compute(9000);
    c = computeFromTopology(t);
    BOOST_TEST(c.totalMhz == 9000);
    BOOST_TEST(!computeFromTopology(base::ClientTopology{}).known());
}

// client/lib/cpustats/stats.go TicksConsumed: percent of one core x MHz per core.
BOOST_AUTO_TEST_CASE(ticks_consumed) {
    Compute c{8000, 4};
    BOOST_TEST(ticksConsumed(100, c) == 2000);
    BOOST_TEST(ticksConsumed(250, c) == 5000);
    BOOST_TEST(ticksConsumed(0, c) == 0);
    BOOST_TEST(ticksConsumed(50, Compute{}) == 0);  // unknown: 0, not a NaN
}

BOOST_AUTO_TEST_CASE(host_from_sysfs) {
    Tree t;
    t.write("cpu/online", "0-1,3\n");
    t.write("cpu/cpu0/cpufreq/scaling_driver", "intel_pstate\n");
    t.write("cpu/cpu0/cpufreq/base_frequency", "2100000\n");    // kHz
    t.write("cpu/cpu0/cpufreq/cpuinfo_max_freq", "4000000\n");
    t.write("cpu/cpu1/cpufreq/scaling_driver", "acpi-cpufreq\n");
    t.write("cpu/cpu1/acpi_cppc/nominal_freq", "2500\n");       // MHz
    t.write("cpu/cpu3/cpufreq/cpuinfo_max_freq", "3000000\n");  // no base: max
    auto c = hostCompute(t.sys(), t.cpuinfo());
    BOOST_TEST(c.cores == 3);
    BOOST_TEST(c.totalMhz == 2100 + 2500 + 3000);
}

// No cpufreq (a VM): every CPU counts the first processor's "cpu MHz",
// as Nomad's Fallback scan does.
BOOST_AUTO_TEST_CASE(host_without_cpufreq) {
    Tree t;
    t.write("cpu/online", "0-3\n");
    t.write("cpuinfo", "processor\t: 0\nmodel name\t: x\ncpu MHz\t\t: 2893.204\n\nprocessor\t: 1\ncpu MHz\t\t: 1200.0\n");
    auto c = hostCompute(t.sys(), t.cpuinfo());
    BOOST_TEST(c.cores == 4);
    BOOST_TEST(c.totalMhz == 4 * 2893.204, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(!hostCompute((t.root / "none").string(), t.cpuinfo()).known());
}
