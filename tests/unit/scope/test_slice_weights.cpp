#define BOOST_TEST_MODULE slice_weights
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <optional>

#include "scope/slice_weights.hpp"
#include "scope/resources.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::scope;

BOOST_AUTO_TEST_CASE(siblings_keep_the_ratio_of_their_sums) {
    // Issue 31's case: one task of weight 39 (1000 shares) against four of
    // 10 (250 shares each): the allocations weigh 39 and 40.
    SiblingWeights w;
    w.set("a", 39);
    w.set("b", 40);
    const double ratio = double(w.weightOf("a")) / double(w.weightOf("b"));
    BOOST_TEST(ratio == 39.0 / 40.0, boost::test_tools::tolerance(0.001));
    // The scale was fitted to a (39 * 2^7 = 4992), b fits it too.
    BOOST_TEST(w.weightOf("b") > 2500u);
    BOOST_TEST(w.weightOf("b") <= kCpuWeightMax);
}

BOOST_AUTO_TEST_CASE(large_sums_are_scaled_down_not_clamped) {
    SiblingWeights w;
    w.set("big", 1'000'000);  // 10,000 tasks of the default weight
    w.set("small", 100);      // one
    BOOST_TEST(w.weightOf("big") <= 5000u);
    BOOST_TEST(w.weightOf("big") > 2500u);
    // 10,000:1 is past what the kernel's 1..10000 can say once the heaviest
    // sits in (2500, 5000]: the lighter one stays at the floor, never 0.
    BOOST_TEST(w.weightOf("small") == kCpuWeightMin);
    w.set("medium", 50'000);
    // 3906:195, to the band's resolution.
    BOOST_TEST(double(w.weightOf("big")) / double(w.weightOf("medium")) == 20.0, boost::test_tools::tolerance(0.002));
}

BOOST_AUTO_TEST_CASE(one_start_rewrites_one_sibling_until_the_scale_must_move) {
    SiblingWeights w;
    for (int i = 0; i < 50; ++i) w.set("a" + std::to_string(i), 100);
    const int shift = w.shift();
    // A sibling a little heavier: only it changes.
    auto changes = w.set("a7", 150);
    BOOST_REQUIRE_EQUAL(changes.size(), 1u);
    BOOST_TEST(changes[0].child == "a7");
    BOOST_TEST(w.shift() == shift);
    // The same sum again: nothing to write.
    BOOST_TEST(w.set("a7", 150).empty());
    // The heaviest past the range: the scale moves and every sibling is rewritten.
    changes = w.set("a9", 100 * 1000);
    BOOST_TEST(changes.size() == 50u);
    BOOST_TEST(changes[0].child == "a9");
    BOOST_TEST(w.shift() < shift);
    for (int i = 0; i < 50; ++i) BOOST_TEST(w.weightOf("a" + std::to_string(i)) >= kCpuWeightMin);
}

BOOST_AUTO_TEST_CASE(a_child_at_zero_is_dropped_and_the_rest_refit) {
    SiblingWeights w;
    w.set("heavy", 100'000);
    w.set("light", 100);
    const uint64_t before = w.weightOf("light");
    auto changes = w.set("heavy", 0);
    BOOST_TEST(w.size() == 1u);
    BOOST_TEST(w.sumOf("heavy") == 0u);
    BOOST_REQUIRE_EQUAL(changes.size(), 1u);
    BOOST_TEST(changes[0].child == "light");
    BOOST_TEST(w.weightOf("light") > before);
    BOOST_TEST(w.weightOf("light") > 2500u);
}

// Stop 49: at 10,000 one-task allocations, each second task moved the
// scale of its bucket of ~156 and every sibling was rewritten.
BOOST_AUTO_TEST_CASE(an_allocation_doubling_or_halving_rewrites_only_itself) {
    SiblingWeights w;
    for (int i = 0; i < 50; ++i) w.set("a" + std::to_string(i), 100);
    const int shift = w.shift();
    BOOST_TEST(w.weightOf("a0") > 2500u);
    BOOST_TEST(w.weightOf("a0") <= 5000u);
    // Its second task, and that task's stop.
    auto changes = w.set("a7", 200);
    BOOST_REQUIRE_EQUAL(changes.size(), 1u);
    BOOST_TEST(changes[0].child == "a7");
    BOOST_TEST(w.weightOf("a7") == 2 * w.weightOf("a0"));
    changes = w.set("a7", 100);
    BOOST_REQUIRE_EQUAL(changes.size(), 1u);
    BOOST_TEST(changes[0].child == "a7");
    // The heaviest's only sibling of its size leaving, half of it left: kept.
    w.set("a7", 200);
    BOOST_TEST(w.set("a7", 0).size() == 0u);
    BOOST_TEST(w.shift() == shift);
    // Four times the heaviest: the scale moves (to put 400 in (2500, 5000],
    // where 100 was), every other sibling rewritten.
    BOOST_TEST(w.set("a8", 400).size() == 48u);
    BOOST_TEST(w.shift() == shift - 2);
}

BOOST_AUTO_TEST_CASE(a_scale_held_already_is_kept_while_it_fits) {
    // A restart (or an upgrade from a band of (5000, 10000]): systemd holds
    // 100 shares as 6400, 2^6; sums set afterwards keep that scale.
    SiblingWeights w;
    w.keepScaleOf(100, 6400);
    BOOST_TEST(w.set("a", 100).size() == 1u);
    w.set("b", 150);
    BOOST_TEST(w.weightOf("a") == 6400u);
    BOOST_TEST(w.weightOf("b") == 9600u);
    BOOST_TEST(w.shift() == 6);
    // One that no longer fits is refitted as usual.
    SiblingWeights past;
    past.keepScaleOf(1, 8192);  // 2^13: 100 would weigh 819,200
    past.set("a", 100);
    BOOST_TEST(past.weightOf("a") == 3200u);
}

BOOST_AUTO_TEST_CASE(a_new_child_reports_its_weight) {
    SiblingWeights w;
    auto changes = w.set("a", 100);
    BOOST_REQUIRE_EQUAL(changes.size(), 1u);
    BOOST_TEST(changes[0].weight == w.weightOf("a"));
    BOOST_TEST(w.weightOf("unknown") == kCpuWeightDefault);
}

BOOST_AUTO_TEST_CASE(beside_scopes_a_sum_is_clamped_not_scaled) {
    BOOST_TEST(unscaledWeight(0) == kCpuWeightMin);
    BOOST_TEST(unscaledWeight(400) == 400u);
    BOOST_TEST(unscaledWeight(1'000'000) == kCpuWeightMax);
}

BOOST_AUTO_TEST_CASE(a_task_without_shares_weighs_the_default_in_shares) {
    BOOST_TEST(cpuWeightFromShares(sharesOfDefaultWeight()) == kCpuWeightDefault);
    BOOST_TEST(cpuWeightFromShares(sharesOfDefaultWeight() - 1) < kCpuWeightDefault);
    BOOST_TEST(sharesOfDefaultWeight() == 2598u);
}

// Issue 49: one task of 500 shares and three of 300+100+100 ask the same
// CPU; mapped one by one and then summed they weighed 19 against 20.
BOOST_AUTO_TEST_CASE(equal_asks_weigh_equal_when_shares_are_summed_first) {
    const uint64_t mappedEach = cpuWeightFromShares(300) + 2 * cpuWeightFromShares(100);
    BOOST_TEST(mappedEach != cpuWeightFromShares(500));
    SiblingWeights w;
    w.set("one", 500);
    w.set("three", 300 + 100 + 100);
    BOOST_TEST(w.weightOf("one") == w.weightOf("three"));
}

BOOST_AUTO_TEST_CASE(v1_shares_give_back_the_weight_systemd_wrote) {
    BOOST_TEST(cpuSharesOfWeight(100) == 1024u);
    BOOST_TEST(cpuSharesOfWeight(200) == 2048u);
    BOOST_TEST(cpuSharesOfWeight(1) == 10u);
    BOOST_TEST(cpuSharesOfWeight(kCpuWeightMax) == 102400u);
    // Every weight the manager sends comes back from its shares...
    for (uint64_t w = kCpuWeightMin; w <= kCpuWeightMax; ++w)
        BOOST_TEST_REQUIRE(cpuWeightOfShares(cpuSharesOfWeight(w)).value_or(0) == w);
    // ...and shares no weight maps to (set by hand, or the kernel's default
    // beside a scale) say nothing: the weight is sent again.
    BOOST_TEST(!cpuWeightOfShares(1025));
    BOOST_TEST(!cpuWeightOfShares(2));
    BOOST_TEST(!cpuWeightOfShares(262144));
}

// The one reader of a cgroup's weight: cpu.weight on v2, cpu.shares mapped
// back on v1 (systemd's 100 is 1024 shares), nothing from a missing or
// foreign file.
BOOST_AUTO_TEST_CASE(a_cgroups_weight_is_read_as_the_kernel_holds_it) {
    taskscope::test::TempDir d;
    const std::string slice = "/nomad.slice/nomad-share.slice";
    std::filesystem::create_directories(d.path + "/v2" + slice);
    std::ofstream(d.path + "/v2" + slice + "/cpu.weight") << "250\n";
    CgroupHost v2{d.path + "/v2", CgroupVersion::V2};
    BOOST_TEST((readCpuWeight(v2, slice) == std::optional<uint64_t>(250)));
    BOOST_TEST(!readCpuWeight(v2, "/nomad.slice/gone.slice"));

    std::filesystem::create_directories(d.path + "/v1/cpu" + slice);
    std::ofstream(d.path + "/v1/cpu" + slice + "/cpu.shares") << cpuSharesOfWeight(100) << "\n";
    CgroupHost v1{d.path + "/v1", CgroupVersion::V1};
    BOOST_TEST((readCpuWeight(v1, slice) == std::optional<uint64_t>(100)));
    std::ofstream(d.path + "/v1/cpu" + slice + "/cpu.shares") << "not a number\n";
    BOOST_TEST(!readCpuWeight(v1, slice));
}
