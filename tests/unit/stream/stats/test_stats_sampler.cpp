#define BOOST_TEST_MODULE stream_stats_sampler
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/event_loop.hpp"
#include "stream/stats/stats_sampler.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::stream::stats;
using namespace taskscope::scope;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Clock = StatsSampler::Clock;

namespace {

const TaskKey web{"a1", "web"};
const char* kWebDir = "/nomad.slice/a1-web.scope";

std::string fixture(const std::string& rel) {
    const char* root = std::getenv("TASKSCOPE_FIXTURES");
    BOOST_REQUIRE_MESSAGE(root, "TASKSCOPE_FIXTURES is not set");
    return std::string(root) + "/stats/" + rel;
}

CgroupPath path(const std::string& p) { return *CgroupPath::parse(p); }

class Recorder : public StatsEvents {
public:
    void samplesTaken(const std::vector<TaskSample>& s) override { batches.push_back(s); }
    void tasksChanged() override { ++changes; }
    void defaultIntervalChanged() override { ++defaultChanges; }
    std::vector<std::vector<TaskSample>> batches;
    int changes = 0;
    int defaultChanges = 0;
};

// A writable copy of a fixture tree and a sampler reading it.
struct Fixture {
    taskscope::test::TempDir tmp;
    taskscope::common::EventLoop loop;
    std::unique_ptr<StatsSampler> sampler;
    Recorder events;
    // Set once the tree is copied: a copy slower than the margin (a loaded
    // CI machine) would otherwise put a task's first due time after t0.
    Clock::time_point t0;

    explicit Fixture(const std::string& variant = "v2", StatsOptions options = {}) {
        fs::copy(fixture(variant), tmp.path, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
        auto reader = CgroupStatsReader::open(tmp.path, variant == "v2" ? CgroupVersion::V2 : CgroupVersion::V1, 100);
        BOOST_REQUIRE(reader.ok());
        sampler = std::make_unique<StatsSampler>(loop, std::move(*reader), std::move(options));
        sampler->attach(events);
        t0 = Clock::now() + 50ms;
    }
    void write(const std::string& rel, const std::string& text) {
        std::ofstream out(tmp.path + rel, std::ios::trunc);  // in place: the open fd sees it
        out << text;
    }
    void cpu(uint64_t total, uint64_t user, uint64_t system) {
        write(std::string(kWebDir) + "/cpu.stat", "usage_usec " + std::to_string(total) + "\nuser_usec " +
                                                      std::to_string(user) + "\nsystem_usec " +
                                                      std::to_string(system) + "\n");
    }
    std::optional<TaskSample> sampleAt(Clock::time_point t, const TaskKey& key = web) {
        for (auto& s : sampler->sampleDue(t))
            if (s.key == key) return s;
        return std::nullopt;
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(first_sample_has_values_but_no_percent, Fixture) {
    sampler->addTask(web, path(kWebDir));
    BOOST_TEST(sampler->taskCount() == 1u);
    auto s = sampleAt(t0);
    BOOST_REQUIRE(s.has_value());
    BOOST_TEST(s->intervalMs == 1000u);
    BOOST_TEST(*s->stats.memoryRss == 209715200u);
    BOOST_TEST(*s->stats.pids == 3u);
    BOOST_TEST(!s->cpu.total);
    BOOST_TEST(!s->cpu.reset);
    BOOST_TEST(s->timestampUs > 0u);
    BOOST_TEST(sampler->latest(web).ok());
}

BOOST_FIXTURE_TEST_CASE(two_busy_cores_show_200_percent, Fixture) {
    sampler->addTask(web, path(kWebDir));
    cpu(10'000'000, 9'000'000, 1'000'000);
    BOOST_REQUIRE(sampleAt(t0).has_value());
    cpu(12'000'000, 10'800'000, 1'200'000);  // 2 s of CPU in 1 s
    auto s = sampleAt(t0 + 1s);
    BOOST_REQUIRE(s.has_value());
    BOOST_TEST(*s->cpu.total == 200.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*s->cpu.user == 180.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*s->cpu.system == 20.0, boost::test_tools::tolerance(1e-9));
}

BOOST_FIXTURE_TEST_CASE(counters_going_back_restart_the_baseline, Fixture) {
    sampler->addTask(web, path(kWebDir));
    cpu(10'000'000, 9'000'000, 1'000'000);
    BOOST_REQUIRE(sampleAt(t0).has_value());
    cpu(1'000, 800, 200);  // the cgroup was recreated
    auto reset = sampleAt(t0 + 1s);
    BOOST_REQUIRE(reset.has_value());
    BOOST_TEST(reset->cpu.reset);
    BOOST_TEST(!reset->cpu.total);
    cpu(501'000, 500'800, 200);
    auto next = sampleAt(t0 + 2s);
    BOOST_REQUIRE(next.has_value());
    BOOST_TEST(!next->cpu.reset);
    BOOST_TEST(*next->cpu.total == 50.0, boost::test_tools::tolerance(1e-9));
}

// Same sampler, v1 tree: cpuacct.usage is ns, cpuacct.stat is USER_HZ ticks.
BOOST_AUTO_TEST_CASE(v1_percent_from_v1_files) {
    Fixture f("v1");
    f.sampler->addTask(web, path(kWebDir));
    BOOST_REQUIRE(f.sampleAt(f.t0).has_value());
    f.write("/cpu,cpuacct/nomad.slice/a1-web.scope/cpuacct.usage", "6500000000\n");     // +1.5 s
    f.write("/cpu,cpuacct/nomad.slice/a1-web.scope/cpuacct.stat", "user 550\nsystem 100\n");  // +1.5 s user
    auto s = f.sampleAt(f.t0 + 1s);
    BOOST_REQUIRE(s.has_value());
    BOOST_TEST(*s->cpu.total == 150.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*s->cpu.user == 150.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*s->cpu.system == 0.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*s->stats.memoryKernel == 1048576u);
}

BOOST_FIXTURE_TEST_CASE(interval_zero_stops_sampling_and_keeps_the_last_sample, Fixture) {
    sampler->addTask(web, path(kWebDir));
    BOOST_REQUIRE(sampleAt(t0).has_value());
    BOOST_TEST(sampler->setTaskInterval(web, 0).ok());
    BOOST_TEST(*sampler->taskInterval(web) == 0u);
    BOOST_TEST(sampler->sampleDue(t0 + 10s).empty());
    BOOST_TEST(sampler->latest(web).ok());
    BOOST_TEST(sampler->setTaskInterval(web, -1).ok());
    BOOST_TEST(*sampler->taskInterval(web) == 1000u);
    BOOST_TEST(sampleAt(t0 + 11s).has_value());
}

BOOST_FIXTURE_TEST_CASE(per_task_interval_is_reported_in_samples, Fixture) {
    sampler->addTask(web, path(kWebDir));
    BOOST_REQUIRE(sampler->setTaskInterval(web, 3000).ok());
    auto s = sampleAt(t0);
    BOOST_REQUIRE(s.has_value());
    BOOST_TEST(s->intervalMs == 3000u);
    // Polled every 100 ms for 9 s, it is due only on the 3 s grid.
    int n = 0;
    for (auto t = t0 + 100ms; t < t0 + 9s + 1ms; t += 100ms) n += sampleAt(t).has_value() ? 1 : 0;
    BOOST_TEST(n == 3);  // every 3 s on the grid: (t0, t0 + 9 s] holds three of its points
}

BOOST_FIXTURE_TEST_CASE(bad_input_gets_named_errors, Fixture) {
    const TaskKey nosuch{"a1", "nosuch"};
    BOOST_TEST(sampler->latest(nosuch).error().name == "NoSuchTask");
    BOOST_TEST(sampler->setTaskInterval(nosuch, 1000).error().name == "NoSuchTask");
    BOOST_TEST(sampler->taskInterval(nosuch).error().name == "NoSuchTask");
    sampler->addTask(web, path(kWebDir));
    BOOST_TEST(sampler->latest(web).error().name == "NoSample");
    for (int64_t bad : {-2LL, 1LL, 99LL, 24LL * 3600 * 1000 + 1})
        BOOST_TEST(sampler->setTaskInterval(web, bad).error().name == "InvalidArgument", bad);
    BOOST_TEST(sampler->setDefaultInterval(50).error().name == "InvalidArgument");
    BOOST_TEST(sampler->defaultIntervalMs() == 1000u);
    BOOST_TEST(sampler->setDefaultInterval(0).ok());
    BOOST_TEST(events.defaultChanges == 1);
    BOOST_TEST(sampler->setDefaultInterval(kMinStatsIntervalMs).ok());
}

BOOST_FIXTURE_TEST_CASE(a_cgroup_that_is_not_there_yet_is_retried, Fixture) {
    const TaskKey late{"a1", "late"};
    sampler->addTask(late, path("/nomad.slice/a1-late.scope"));
    BOOST_TEST(!sampleAt(t0, late).has_value());
    fs::copy(tmp.path + kWebDir, tmp.path + "/nomad.slice/a1-late.scope");
    BOOST_TEST(sampleAt(t0 + 1s, late).has_value());
}

BOOST_FIXTURE_TEST_CASE(removing_and_retaining_tasks, Fixture) {
    const TaskKey old{"a1", "old"};
    sampler->addTask(web, path(kWebDir));
    sampler->addTask(old, path("/nomad.slice/a1-old.scope"));
    BOOST_TEST(sampler->taskCount() == 2u);
    sampler->retainOnly({web});
    BOOST_TEST(sampler->taskCount() == 1u);
    BOOST_TEST(!sampler->knows(old));
    sampler->removeTask(web);
    BOOST_TEST(sampler->taskCount() == 0u);
    BOOST_TEST(sampler->sampleDue(t0 + 5s).empty());
}

BOOST_FIXTURE_TEST_CASE(many_changes_in_one_turn_are_announced_once, Fixture) {
    for (int i = 0; i < 100; ++i) sampler->addTask({"a1", "t" + std::to_string(i)}, path(kWebDir));
    sampler->removeTask({"a1", "t7"});
    BOOST_TEST(events.changes == 0);
    loop.addTimer(Clock::now() + 50ms, [this] { loop.quit(); });
    loop.run();
    BOOST_TEST(events.changes == 1);
    BOOST_TEST(sampler->taskCount() == 99u);
}

BOOST_AUTO_TEST_CASE(per_task_intervals_survive_a_restart) {
    taskscope::test::TempDir state;
    const auto file = state.path + "/stats-intervals.json";
    {
        Fixture f("v2", keptIn({}, file, {}));
        f.sampler->addTask(web, path(kWebDir));
        f.sampler->addTask({"a1", "old"}, path("/nomad.slice/a1-old.scope"));
        BOOST_REQUIRE(f.sampler->setTaskInterval(web, 3000).ok());
        BOOST_REQUIRE(f.sampler->setTaskInterval({"a1", "old"}, 0).ok());
    }
    auto kept = loadStatsIntervals(file);
    BOOST_REQUIRE(kept.ok());
    BOOST_TEST(kept->tasks.size() == 2u);
    BOOST_TEST(!kept->defaultMs.has_value());  // never set by a caller: the option's stays in charge
    Fixture f("v2", keptIn({}, file, *kept));
    f.sampler->addTask(web, path(kWebDir));
    BOOST_TEST(*f.sampler->taskInterval(web) == 3000u);
    // The manager says only web still runs: old's interval is dropped.
    f.sampler->retainOnly({web});
    BOOST_TEST(loadStatsIntervals(file)->tasks.size() == 1u);
    f.sampler->removeTask(web);
    BOOST_TEST(loadStatsIntervals(file)->tasks.empty());
    BOOST_TEST(loadStatsIntervals(state.path + "/none.json")->tasks.empty());
    std::ofstream(state.path + "/bad.json") << "{\"tasks\":[{\"alloc_id\":1}]}";
    BOOST_TEST(!loadStatsIntervals(state.path + "/bad.json").ok());
}

BOOST_AUTO_TEST_CASE(a_default_set_by_a_caller_survives_a_restart) {
    taskscope::test::TempDir state;
    const auto file = state.path + "/stats-intervals.json";
    {
        Fixture f("v2", keptIn({}, file, {}));
        f.sampler->addTask(web, path(kWebDir));
        BOOST_REQUIRE(f.sampler->setTaskInterval(web, 3000).ok());
        BOOST_REQUIRE(f.sampler->setDefaultInterval(250).ok());
    }
    auto kept = loadStatsIntervals(file);
    BOOST_REQUIRE(kept.ok());
    BOOST_TEST(kept->defaultMs.value_or(0) == 250u);
    BOOST_TEST(kept->tasks.size() == 1u);
    {
        StatsOptions option;
        option.defaultIntervalMs = 2000;  // the caller's 250 wins
        Fixture f("v2", keptIn(option, file, *kept));
        // Saving the per-task intervals keeps the default beside them.
        f.sampler->retainOnly({});
        BOOST_TEST(f.sampler->defaultIntervalMs() == 250u);
    }
    BOOST_TEST(loadStatsIntervals(file)->defaultMs.value_or(0) == 250u);
    BOOST_TEST(loadStatsIntervals(file)->tasks.empty());
    // Setting the value it already has still makes it the caller's.
    {
        Fixture f("v2", keptIn({}, state.path + "/same.json", {}));
        BOOST_REQUIRE(f.sampler->setDefaultInterval(1000).ok());
    }
    BOOST_TEST(loadStatsIntervals(state.path + "/same.json")->defaultMs.value_or(0) == 1000u);
    std::ofstream(state.path + "/bad-default.json") << "{\"tasks\":[],\"default_interval_ms\":5}";
    BOOST_TEST(!loadStatsIntervals(state.path + "/bad-default.json").ok());
}

BOOST_FIXTURE_TEST_CASE(the_timer_batches_a_tick_into_one_event, Fixture) {
    BOOST_REQUIRE(sampler->setDefaultInterval(100).ok());
    sampler->addTask(web, path(kWebDir));
    sampler->addTask({"a1", "old"}, path("/nomad.slice/a1-old.scope"));
    loop.addTimer(Clock::now() + 550ms, [this] { loop.quit(); });
    loop.run();
    BOOST_TEST(events.batches.size() >= 3u);
    // After the first samples, every tick carries both tasks.
    for (size_t i = 1; i < events.batches.size(); ++i) BOOST_TEST(events.batches[i].size() == 2u);
}

// --- allocations --------------------------------------------------------------

namespace {

const char* kShare = "/nomad.slice/nomad-share.slice/nomad-share-b01.slice";
const std::string kA2Slice = "nomad-share-b01-a2.slice";
const std::string kA2Dir = std::string(kShare) + "/" + kA2Slice;

// The cgroup files of one directory into another (made if need be).
void copyFiles(const std::string& from, const std::string& to) {
    fs::create_directories(to);
    for (const auto& e : fs::directory_iterator(from))
        if (e.is_regular_file())
            fs::copy_file(e.path(), to + "/" + e.path().filename().string(), fs::copy_options::overwrite_existing);
}

// An allocation a2 in the nested layout: its slice's own files (the
// kernel's totals) and two task scopes, one in an overflow slice.
struct Nested : Fixture {
    const TaskKey web2{"a2", "web"};
    const TaskKey db2{"a2", "db"};
    const std::string webDir = kA2Dir + "/a2-web.scope";
    const std::string dbDir = kA2Dir + "/nomad-share-b01-a2-o1.slice/a2-db.scope";

    Nested() {
        for (const auto& dir : {kA2Dir, webDir, dbDir}) copyFiles(tmp.path + kWebDir, tmp.path + dir);
        sliceCpu(9000000, 7000000, 2000000);
        write(kA2Dir + "/memory.current", "734003200\n");
        write(kA2Dir + "/pids.current", "12\n");
    }
    void sliceCpu(uint64_t total, uint64_t user, uint64_t system) {
        write(kA2Dir + "/cpu.stat", "usage_usec " + std::to_string(total) + "\nuser_usec " + std::to_string(user) +
                                        "\nsystem_usec " + std::to_string(system) + "\n");
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(an_allocation_slice_is_sampled_as_one_cgroup, Nested) {
    sampler->addTask(web2, path(webDir));
    sampler->addTask(db2, path(dbDir));
    BOOST_TEST(!sampler->allocSliceKnown(web2));
    BOOST_TEST((sampler->sliceUnknown("a2") == std::optional<TaskKey>(db2)));
    BOOST_REQUIRE(sampler->setAllocSlice(web2, kA2Slice).ok());
    // Its sibling below the same slice (in an overflow slice) is placed with it.
    BOOST_TEST(sampler->allocSliceKnown(db2));
    BOOST_TEST(!sampler->sliceUnknown("a2").has_value());
    BOOST_TEST(sampler->sliceCount() == 1u);
    BOOST_TEST(sampler->latestAllocation("a2").error().name == "NoSample");

    sampler->sampleDue(t0);
    auto a = sampler->latestAllocation("a2");
    BOOST_REQUIRE(a.ok());
    BOOST_TEST(a->tasks == 2u);
    BOOST_TEST(a->slices == std::vector<std::string>{kA2Slice});
    BOOST_TEST(a->intervalMs == 1000u);
    // The slice's own values, not a sum of the tasks'.
    BOOST_TEST(*a->stats.memoryUsage == 734003200u);
    BOOST_TEST(*a->stats.pids == 12u);
    BOOST_TEST(*a->stats.cpuTotalUs == 9000000u);
    BOOST_TEST(a->stats.memoryPeak.has_value());  // one part: its peak is the allocation's
    BOOST_TEST(!a->cpu.total);              // first sample: no percentages yet

    sliceCpu(12000000, 9500000, 2500000);  // +3 s in 1 s: three busy cores
    sampler->sampleDue(t0 + 1s);
    a = sampler->latestAllocation("a2");
    BOOST_REQUIRE(a.ok());
    BOOST_TEST(*a->cpu.total == 300.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*a->cpu.user == 250.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(*a->cpu.system == 50.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(sampler->latestAllAllocations().size() == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_slice_follows_the_default_interval_and_goes_with_its_last_task, Nested) {
    sampler->addTask(web2, path(webDir));
    BOOST_REQUIRE(sampler->setAllocSlice(web2, kA2Slice).ok());
    // A task that comes later below a known slice is placed at once.
    sampler->addTask(db2, path(dbDir));
    BOOST_TEST(sampler->allocSliceKnown(db2));
    // A task's own interval is not the slice's.
    BOOST_REQUIRE(sampler->setTaskInterval(web2, 0).ok());
    BOOST_REQUIRE(sampler->setTaskInterval(db2, 0).ok());
    sampler->sampleDue(t0);
    BOOST_TEST(sampler->latestAllocation("a2").ok());
    BOOST_REQUIRE(sampler->setDefaultInterval(2000).ok());
    sliceCpu(10000000, 8000000, 2000000);
    sampler->sampleDue(t0 + 2100ms);
    BOOST_TEST(sampler->latestAllocation("a2")->intervalMs == 2000u);
    sampler->removeTask(web2);
    BOOST_TEST(sampler->sliceCount() == 1u);
    BOOST_TEST(sampler->latestAllocation("a2")->tasks == 1u);
    sampler->retainOnly({});
    BOOST_TEST(sampler->sliceCount() == 0u);
    BOOST_TEST(sampler->latestAllocation("a2").error().name == "NoSuchAllocation");
    BOOST_TEST(sampler->latestAllAllocations().empty());
}

BOOST_FIXTURE_TEST_CASE(a_flat_allocation_sums_its_tasks, Fixture) {
    const TaskKey old{"a1", "old"};
    sampler->addTask(web, path(kWebDir));
    sampler->addTask(old, path("/nomad.slice/a1-old.scope"));
    BOOST_REQUIRE(sampler->setAllocSlice(web, "").ok());
    BOOST_REQUIRE(sampler->setAllocSlice(old, "").ok());
    BOOST_TEST(sampler->sliceCount() == 0u);
    sampler->sampleDue(t0);
    const auto w = *sampler->latest(web);
    const auto o = *sampler->latest(old);
    auto a = sampler->latestAllocation("a1");
    BOOST_REQUIRE(a.ok());
    BOOST_TEST(a->tasks == 2u);
    BOOST_TEST(a->slices.empty());
    BOOST_TEST(*a->stats.memoryUsage == *w.stats.memoryUsage + *o.stats.memoryUsage);
    BOOST_TEST(*a->stats.cpuTotalUs == 5000000u + 1200u);
    BOOST_TEST(*a->stats.pids == *w.stats.pids + *o.stats.pids);
    BOOST_TEST(!a->stats.memorySwap);  // old's kernel has no memory.swap.current: not in every part
    BOOST_TEST(!a->stats.memoryPeak);  // peaks do not add
    cpu(6000000, 4800000, 1200000);
    write("/nomad.slice/a1-old.scope/cpu.stat", "usage_usec 501200\nuser_usec 400800\nsystem_usec 100400\n");
    sampler->sampleDue(t0 + 1s);
    a = sampler->latestAllocation("a1");
    BOOST_TEST(*a->cpu.total == 150.0, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(a->timestampUs == std::min(sampler->latest(web)->timestampUs, sampler->latest(old)->timestampUs));
}

BOOST_FIXTURE_TEST_CASE(a_task_with_no_sample_leaves_the_sum_unmeasured, Fixture) {
    const TaskKey old{"a1", "old"};
    sampler->addTask(web, path(kWebDir));
    BOOST_REQUIRE(sampler->setTaskInterval(web, 0).ok());  // never sampled
    sampler->addTask(old, path("/nomad.slice/a1-old.scope"));
    sampler->sampleDue(t0);
    // Until a task's slice is known it counts on its own, as a flat one.
    auto a = sampler->latestAllocation("a1");
    BOOST_REQUIRE(a.ok());
    BOOST_TEST(a->tasks == 2u);
    BOOST_TEST(!a->stats.memoryUsage);
    BOOST_TEST(!a->stats.cpuTotalUs);
    sampler->removeTask(web);
    BOOST_TEST(*sampler->latestAllocation("a1")->stats.memoryUsage == 1048576u);
}

BOOST_FIXTURE_TEST_CASE(a_slice_the_task_is_not_below_is_refused, Nested) {
    sampler->addTask(web2, path(webDir));
    auto r = sampler->setAllocSlice(web2, "nomad-reserve-a2.slice");
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "InvalidArgument");
    BOOST_TEST(sampler->allocSliceKnown(web2));  // counted on its own, not asked again
    BOOST_TEST(sampler->sliceCount() == 0u);
    BOOST_TEST(sampler->setAllocSlice({"a2", "nosuch"}, kA2Slice).error().name == "NoSuchTask");
    BOOST_TEST(sampler->latestAllocation("nosuch").error().name == "NoSuchAllocation");
    // A task whose cgroup changed starts afresh: its slice is asked for again.
    BOOST_REQUIRE(sampler->setAllocSlice(web2, kA2Slice).ok());
    BOOST_TEST(sampler->sliceCount() == 1u);
    sampler->addTask(web2, path(dbDir));
    BOOST_TEST(!sampler->allocSliceKnown(web2));
    BOOST_TEST(sampler->sliceCount() == 0u);
}

// An allocation with tasks on reserved and on shared cores has two slices;
// its totals are their sum.
BOOST_FIXTURE_TEST_CASE(two_slices_of_one_allocation_add_up, Nested) {
    const std::string reserve = "/nomad.slice/nomad-reserve.slice/nomad-reserve-a2.slice";
    copyFiles(tmp.path + kA2Dir, tmp.path + reserve);
    copyFiles(tmp.path + kWebDir, tmp.path + reserve + "/a2-pinned.scope");
    write(reserve + "/memory.current", "1000\n");
    sampler->addTask(web2, path(webDir));
    sampler->addTask({"a2", "pinned"}, path(reserve + "/a2-pinned.scope"));
    BOOST_REQUIRE(sampler->setAllocSlice(web2, kA2Slice).ok());
    BOOST_TEST((sampler->sliceUnknown("a2") == std::optional<TaskKey>(TaskKey{"a2", "pinned"})));
    BOOST_REQUIRE(sampler->setAllocSlice({"a2", "pinned"}, "nomad-reserve-a2.slice").ok());
    sampler->sampleDue(t0);
    const auto a = sampler->latestAllocation("a2");
    BOOST_REQUIRE(a.ok());
    BOOST_TEST(a->slices == (std::vector<std::string>{"nomad-reserve-a2.slice", kA2Slice}));
    BOOST_TEST(*a->stats.memoryUsage == 734003200u + 1000u);
    BOOST_TEST(*a->stats.cpuTotalUs == 2 * 9000000u);
}

// v1: the slice's files are read from each controller's hierarchy, as a task's.
BOOST_AUTO_TEST_CASE(v1_allocation_slice_per_controller) {
    Fixture f("v1");
    const std::string slice = "nomad-share-b01-a2.slice";
    const std::string rel = std::string(kShare) + "/" + slice;
    for (const char* c : {"/cpu,cpuacct", "/memory", "/pids"}) {
        copyFiles(f.tmp.path + c + "/nomad.slice/a1-web.scope", f.tmp.path + c + rel);
        copyFiles(f.tmp.path + c + "/nomad.slice/a1-web.scope", f.tmp.path + c + rel + "/a2-web.scope");
    }
    f.write("/cpu,cpuacct" + rel + "/cpuacct.usage", "8000000000\n");
    f.write("/memory" + rel + "/memory.usage_in_bytes", "4096000\n");
    f.sampler->addTask({"a2", "web"}, path(rel + "/a2-web.scope"));
    BOOST_REQUIRE(f.sampler->setAllocSlice({"a2", "web"}, slice).ok());
    f.sampler->sampleDue(f.t0);
    f.write("/cpu,cpuacct" + rel + "/cpuacct.usage", "9000000000\n");  // +1 s
    f.sampler->sampleDue(f.t0 + 1s);
    const auto a = f.sampler->latestAllocation("a2");
    BOOST_REQUIRE(a.ok());
    BOOST_TEST(*a->stats.cpuTotalUs == 9000000u);
    BOOST_TEST(*a->stats.memoryUsage == 4096000u);
    BOOST_TEST(a->stats.pids.has_value());
    BOOST_TEST(*a->cpu.total == 100.0, boost::test_tools::tolerance(1e-9));
}
