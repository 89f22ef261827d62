#define BOOST_TEST_MODULE stream_cgroup_stats
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include "scope/cgroup_path.hpp"
#include "scope/cgroup_stats.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::scope;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& rel) {
    const char* root = std::getenv("TASKSCOPE_FIXTURES");
    BOOST_REQUIRE_MESSAGE(root, "TASKSCOPE_FIXTURES is not set");
    return std::string(root) + "/stats/" + rel;
}

CgroupPath path(const std::string& p) {
    auto r = CgroupPath::parse(p);
    BOOST_REQUIRE_MESSAGE(r.ok(), p);
    return *r;
}

CgroupStats readOnce(const std::string& root, CgroupVersion v, const std::string& cgroup,
                     std::vector<StatFile>* missing = nullptr) {
    auto reader = CgroupStatsReader::open(root, v, 100);
    BOOST_REQUIRE(reader.ok());
    auto files = reader->openCgroup(path(cgroup));
    BOOST_REQUIRE_MESSAGE(files.ok(), (files.ok() ? std::string() : files.error().message));
    if (missing) *missing = files->missing();
    auto stats = reader->read(*files);
    BOOST_REQUIRE(stats.ok());
    return *stats;
}

void writeFile(const std::string& p, const std::string& text) {
    // In place: the reader's open file must see the new contents.
    std::ofstream out(p, std::ios::trunc);
    out << text;
}

}  // namespace

BOOST_AUTO_TEST_CASE(cgroup_path_is_validated) {
    BOOST_TEST(CgroupPath::parse("/nomad.slice/a1-web.scope").ok());
    BOOST_TEST(path("/nomad.slice/a1-web.scope").relative() == "nomad.slice/a1-web.scope");
    for (const char* bad : {"", "/", "nomad.slice/x.scope", "/nomad.slice/../x", "/a//b", "/a/./b", "/a/", "/.."}) {
        auto r = CgroupPath::parse(bad);
        BOOST_TEST(!r.ok(), bad);
        if (!r.ok()) BOOST_TEST(r.error().name == "InvalidArgument");
    }
}

// A task's allocation slice is found among the ancestors of the cgroup
// systemd reported, by its name as the manager reported it.
BOOST_AUTO_TEST_CASE(ancestor_named_finds_the_allocation_slice) {
    const auto task = path("/nomad.slice/nomad-share.slice/nomad-share-b2a.slice/nomad-share-b2a-a1.slice/"
                           "nomad-share-b2a-a1-o1.slice/a1-web.scope");
    BOOST_TEST(task.name() == "a1-web.scope");
    const auto alloc = task.ancestorNamed("nomad-share-b2a-a1.slice");
    BOOST_REQUIRE(alloc.has_value());
    BOOST_TEST(alloc->str() == "/nomad.slice/nomad-share.slice/nomad-share-b2a.slice/nomad-share-b2a-a1.slice");
    BOOST_TEST(alloc->name() == "nomad-share-b2a-a1.slice");
    BOOST_TEST(task.ancestorNamed("nomad.slice")->str() == "/nomad.slice");
    // Not the path itself, not a part of a name, not a component that is not there.
    BOOST_TEST(!task.ancestorNamed("a1-web.scope").has_value());
    BOOST_TEST(!task.ancestorNamed("a1.slice").has_value());
    BOOST_TEST(!task.ancestorNamed("").has_value());
    BOOST_TEST(!task.ancestorNamed("nomad-reserve-a1.slice").has_value());
    BOOST_TEST(!path("/a1-web.scope").ancestorNamed("a1-web.scope").has_value());
    // The innermost of two equal names (a hand-made tree).
    BOOST_TEST(path("/x.slice/y/x.slice/t.scope").ancestorNamed("x.slice")->str() == "/x.slice/y/x.slice");
    // A flat task: its only ancestor is the configured slice.
    BOOST_TEST(!path("/nomad.slice/a1-web.scope").ancestorNamed("nomad-share-b2a-a1.slice").has_value());
}

BOOST_AUTO_TEST_CASE(v2_reads_every_file) {
    std::vector<StatFile> missing;
    const auto s = readOnce(fixture("v2"), CgroupVersion::V2, "/nomad.slice/a1-web.scope", &missing);
    BOOST_TEST(missing.empty());
    BOOST_TEST(*s.cpuTotalUs == 5000000u);
    BOOST_TEST(*s.cpuUserUs == 4000000u);
    BOOST_TEST(*s.cpuSystemUs == 1000000u);
    BOOST_TEST(*s.cpuThrottledPeriods == 7u);
    BOOST_TEST(*s.cpuThrottledTimeUs == 350000u);
    BOOST_TEST(*s.memoryRss == 209715200u);
    BOOST_TEST(*s.memoryCache == 4194304u);
    BOOST_TEST(*s.memoryKernel == 1048576u);
    BOOST_TEST(*s.memoryUsage == 215000000u);
    BOOST_TEST(*s.memorySwap == 0u);
    BOOST_TEST(*s.memoryPeak == 220000000u);
    BOOST_TEST(*s.pids == 3u);
}

BOOST_AUTO_TEST_CASE(v2_missing_files_and_keys_are_unmeasured) {
    // No cpu controller (no throttling lines), no memory.peak (before 5.19),
    // no memory.swap.current, and a memory.stat without "kernel" (before 5.18).
    std::vector<StatFile> missing;
    const auto s = readOnce(fixture("v2"), CgroupVersion::V2, "/nomad.slice/a1-old.scope", &missing);
    BOOST_TEST(missing.size() == 2u);
    BOOST_TEST(*s.cpuTotalUs == 1200u);
    BOOST_TEST(!s.cpuThrottledPeriods);
    BOOST_TEST(!s.cpuThrottledTimeUs);
    BOOST_TEST(!s.memoryPeak);
    BOOST_TEST(!s.memorySwap);
    BOOST_TEST(*s.memoryUsage == 1048576u);
    // kernel_stack + pagetables + percpu + sock + vmalloc + slab
    BOOST_TEST(*s.memoryKernel == 16384u + 40960u + 0u + 4096u + 20480u);
    BOOST_TEST(*s.pids == 1u);
}

BOOST_AUTO_TEST_CASE(v1_reads_each_controller_hierarchy) {
    std::vector<StatFile> missing;
    const auto s = readOnce(fixture("v1"), CgroupVersion::V1, "/nomad.slice/a1-web.scope", &missing);
    BOOST_TEST(missing.empty());
    BOOST_TEST(*s.cpuTotalUs == 5000000u);    // cpuacct.usage, ns
    BOOST_TEST(*s.cpuUserUs == 4000000u);     // 400 ticks at USER_HZ 100
    BOOST_TEST(*s.cpuSystemUs == 1000000u);   // 100 ticks
    BOOST_TEST(*s.cpuThrottledPeriods == 7u);
    BOOST_TEST(*s.cpuThrottledTimeUs == 350000u);  // throttled_time, ns
    BOOST_TEST(*s.memoryRss == 209715200u);
    BOOST_TEST(*s.memoryCache == 4194304u);
    BOOST_TEST(*s.memorySwap == 8192u);
    BOOST_TEST(*s.memoryUsage == 215000000u);
    BOOST_TEST(*s.memoryPeak == 220000000u);
    BOOST_TEST(*s.memoryKernel == 1048576u);
    BOOST_TEST(*s.pids == 3u);
}

BOOST_AUTO_TEST_CASE(v1_controller_without_the_cgroup_leaves_its_values_unmeasured) {
    // Only the memory hierarchy has this cgroup, with no kmem file and no
    // swap accounting: the CPU and pids values are absent, never an error.
    std::vector<StatFile> missing;
    const auto s = readOnce(fixture("v1"), CgroupVersion::V1, "/nomad.slice/a1-min.scope", &missing);
    BOOST_TEST(missing.size() == 5u);  // cpuacct.usage, cpuacct.stat, cpu.stat, kmem, pids.current
    BOOST_TEST(!s.cpuTotalUs);
    BOOST_TEST(!s.cpuUserUs);
    BOOST_TEST(!s.cpuThrottledPeriods);
    BOOST_TEST(!s.pids);
    BOOST_TEST(!s.memoryKernel);
    BOOST_TEST(!s.memorySwap);
    BOOST_TEST(*s.memoryRss == 655360u);  // rss: no total_rss line
    BOOST_TEST(*s.memoryCache == 262144u);
    BOOST_TEST(*s.memoryUsage == 1048576u);
    BOOST_TEST(*s.memoryPeak == 2097152u);
}

BOOST_AUTO_TEST_CASE(v1_hierarchy_not_mounted) {
    taskscope::test::TempDir tmp;
    fs::copy(fixture("v1"), tmp.path, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    fs::remove_all(tmp.path + "/pids");
    std::vector<StatFile> missing;
    const auto s = readOnce(tmp.path, CgroupVersion::V1, "/nomad.slice/a1-web.scope", &missing);
    BOOST_TEST(missing.size() == 1u);
    BOOST_TEST(!s.pids);
    BOOST_TEST(*s.memoryRss == 209715200u);
}

BOOST_AUTO_TEST_CASE(unknown_cgroup_is_not_found) {
    auto reader = CgroupStatsReader::open(fixture("v2"), CgroupVersion::V2, 100);
    BOOST_REQUIRE(reader.ok());
    auto files = reader->openCgroup(path("/nomad.slice/nosuch.scope"));
    BOOST_REQUIRE(!files.ok());
    BOOST_TEST(files.error().name == "NotFound");
    BOOST_TEST(!CgroupStatsReader::open("/nonexistent/cgroup", CgroupVersion::V2).ok());
}

BOOST_AUTO_TEST_CASE(open_files_see_new_contents) {
    // pread at offset 0 on the kept fd, as on cgroupfs where it regenerates.
    taskscope::test::TempDir tmp;
    fs::copy(fixture("v2"), tmp.path, fs::copy_options::recursive);
    auto reader = CgroupStatsReader::open(tmp.path, CgroupVersion::V2, 100);
    BOOST_REQUIRE(reader.ok());
    auto files = reader->openCgroup(path("/nomad.slice/a1-web.scope"));
    BOOST_REQUIRE(files.ok());
    BOOST_TEST(*reader->read(*files)->pids == 3u);
    writeFile(tmp.path + "/nomad.slice/a1-web.scope/pids.current", "42\n");
    BOOST_TEST(*reader->read(*files)->pids == 42u);
}

BOOST_AUTO_TEST_CASE(memory_stat_is_read_again_when_usage_moves_or_after_n_samples) {
    for (auto [variant, version, usageFile, statText] :
         {std::tuple{"v2", CgroupVersion::V2, "/nomad.slice/a1-web.scope/memory.current", "anon 7\nfile 8\nkernel 9\n"},
          std::tuple{"v1", CgroupVersion::V1, "/memory/nomad.slice/a1-web.scope/memory.usage_in_bytes",
                     "total_rss 7\ntotal_cache 8\ntotal_swap 9\n"}}) {
        BOOST_TEST_CONTEXT(variant) {
            taskscope::test::TempDir tmp;
            fs::copy(fixture(variant), tmp.path, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
            const std::string statFile =
                tmp.path + (version == CgroupVersion::V1 ? "/memory" : "") + "/nomad.slice/a1-web.scope/memory.stat";
            auto reader = CgroupStatsReader::open(tmp.path, version, 100);
            BOOST_REQUIRE(reader.ok());
            reader->setMemoryStatEvery(3);
            auto files = reader->openCgroup(path("/nomad.slice/a1-web.scope"));
            BOOST_REQUIRE(files.ok());
            BOOST_TEST(*reader->read(*files)->memoryRss == 209715200u);
            // The usage holds still: memory.stat's last values stand.
            writeFile(statFile, statText);
            BOOST_TEST(*reader->read(*files)->memoryRss == 209715200u);
            BOOST_TEST(*reader->read(*files)->memoryRss == 209715200u);
            BOOST_TEST(files->memoryStatReads() == 1u);
            // ... but it is read once in every 3 samples.
            BOOST_TEST(*reader->read(*files)->memoryRss == 7u);
            BOOST_TEST(files->memoryStatReads() == 2u);
            // The usage moves: read at once.
            writeFile(statFile, "anon 70\nfile 80\nkernel 90\ntotal_rss 70\ntotal_cache 80\n");
            writeFile(tmp.path + usageFile, "12345\n");
            const auto s = *reader->read(*files);
            BOOST_TEST(*s.memoryRss == 70u);
            BOOST_TEST(*s.memoryCache == 80u);
            BOOST_TEST(*s.memoryUsage == 12345u);
            BOOST_TEST(files->memoryStatReads() == 3u);
            // 1: every time.
            reader->setMemoryStatEvery(1);
            (void)reader->read(*files);
            BOOST_TEST(files->memoryStatReads() == 4u);
        }
    }
}

BOOST_AUTO_TEST_CASE(malformed_files_set_nothing) {
    CgroupStats s;
    BOOST_TEST(!parseStatFile(StatFile::V2PidsCurrent, "max\n", s, 100));
    BOOST_TEST(!s.pids);
    BOOST_TEST(!parseStatFile(StatFile::V2CpuStat, "usage_usec 10\nuser_usec ten\n", s, 100));
    BOOST_TEST(!s.cpuTotalUs);
    BOOST_TEST(!parseStatFile(StatFile::V2MemoryStat, "anon\n", s, 100));
    BOOST_TEST(!parseStatFile(StatFile::V1CpuacctUsage, "", s, 100));
    BOOST_TEST(!parseStatFile(StatFile::V2MemoryCurrent, "-5\n", s, 100));
    BOOST_TEST(!s.memoryUsage);
    // An unknown extra line is fine; only the shape matters.
    BOOST_TEST(parseStatFile(StatFile::V2CpuStat, "usage_usec 10\nnew_key 3\n", s, 100));
    BOOST_TEST(*s.cpuTotalUs == 10u);
}

BOOST_AUTO_TEST_CASE(cpuacct_stat_honours_user_hz) {
    CgroupStats s;
    BOOST_TEST(parseStatFile(StatFile::V1CpuacctStat, "user 250\nsystem 50\n", s, 250));
    BOOST_TEST(*s.cpuUserUs == 1000000u);
    BOOST_TEST(*s.cpuSystemUs == 200000u);
}

BOOST_AUTO_TEST_CASE(file_tables_per_version) {
    BOOST_TEST(statFiles(CgroupVersion::V2).size() == 6u);
    BOOST_TEST(statFiles(CgroupVersion::V1).size() == 8u);
    for (auto f : statFiles(CgroupVersion::V2)) BOOST_TEST(std::string(statFileController(f)).empty());
    for (auto f : statFiles(CgroupVersion::V1)) BOOST_TEST(!std::string(statFileController(f)).empty());
    BOOST_TEST(std::string(statFileName(StatFile::V1KmemUsage)) == "memory.kmem.usage_in_bytes");
}
