#define BOOST_TEST_MODULE allocation_slices
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "common/event_loop.hpp"
#include "manager/node/allocation_slices.hpp"
#include "support/fake_systemd_client.hpp"
#include "support/run_loop.hpp"

using namespace taskscope;
using manager::AllocationSlices;
using test::FakeSystemdClient;

namespace {

/// A task asking `shares` (its scope's weight, when it carries one, their map).
AllocationSlices::TaskCpu cpu(uint64_t shares) {
    spec::Resources r;
    r.cpuShares = shares;
    return AllocationSlices::taskCpu(r);
}

struct Fixture {
    FakeSystemdClient systemd;  // no loop: every call answers at once
    AllocationSlices slices;
    std::map<std::string, bool> carries;  ///< by unit: its scope was started with its weight

    explicit Fixture(unsigned cap = 100) : slices{scope::SliceLayout{"nomad.slice", 64, cap}, systemd} {}

    scope::TaskSlices place(const std::string& alloc, bool reserved = false) {
        auto p = slices.place(alloc, reserved);
        BOOST_REQUIRE(p.ok());
        return *p;
    }
    /// Starts `unit`'s scope as the manager does, with the slices it carries.
    AllocationSlices::ScopeStart scopeStart(const std::string& unit) {
        return [this, unit](const scope::AuxUnits& aux, bool carry, AllocationSlices::Completion started) {
            carries[unit] = carry;
            systemd.startScopeAsync(unit, {}, {}, aux, std::move(started));
        };
    }
    /// Enters a task; returns whether its slices were made, and checks that
    /// every slice start was sent before its scope's.
    bool enter(const std::string& unit, const std::string& alloc, uint64_t shares, bool reserved = false) {
        std::optional<bool> made, scope;
        size_t startsAtIssue = 0;
        auto claimed = slices.claim(unit, alloc, reserved);
        BOOST_REQUIRE(claimed.ok());
        auto start = scopeStart(unit);
        slices.enter(
            unit, *claimed, cpu(shares),
            [&](const scope::AuxUnits& aux, bool carry, AllocationSlices::Completion started) {
                startsAtIssue = systemd.count("startSlice");
                start(aux, carry, std::move(started));
            },
            [&](common::Result<void> r) { scope = r.ok(); }, [&](common::Result<void> r) { made = r.ok(); });
        BOOST_TEST(startsAtIssue == systemd.count("startSlice"));
        BOOST_TEST(scope.value_or(false));
        return made.value_or(false);
    }
    uint64_t weightOf(const std::string& unit) {
        auto v = systemd.propertyOf(unit, "CPUWeight");
        BOOST_REQUIRE(v.has_value());
        return v->get<uint64_t>();
    }
    /// The slices made, in order: on their own or in a scope's call.
    std::vector<std::string> started() {
        std::vector<std::string> out;
        for (const auto& c : systemd.calls)
            if (c.method == "startSlice" || c.method == "auxSlice") out.push_back(c.unit);
        return out;
    }
    size_t starts(const std::string& slice) { return systemd.count("startSlice", slice) + systemd.count("auxSlice", slice); }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(first_task_makes_its_slices_outermost_first_with_weights, Fixture) {
    const auto p = place("a1");
    BOOST_TEST(enter("a1-web.scope", "a1", 100));
    BOOST_TEST(started() == p.chain);  // share, bucket, allocation
    // All in the scope's own call: one call for a new allocation's first task.
    BOOST_TEST(systemd.count("startSlice") == 0u);
    BOOST_TEST(systemd.calls.size() == 1u + p.chain.size());
    BOOST_TEST(p.chain.size() == 3u);
    // The heaviest sibling lands in (2500, 5000]: 100 * 2^5.
    BOOST_TEST(weightOf(p.allocation) == 3200u);
    BOOST_TEST(weightOf(p.chain[1]) == 3200u);
    // Share and reserve sit beside flat tasks: no weight of their own.
    BOOST_TEST(!systemd.propertyOf(p.chain[0], "CPUWeight").has_value());
    BOOST_TEST(slices.allocationOf("a1-web.scope") == p.allocation);
}

BOOST_FIXTURE_TEST_CASE(a_second_task_changes_weights_and_makes_nothing, Fixture) {
    const auto p = place("a1");
    enter("a1-web.scope", "a1", 100);
    systemd.calls.clear();
    BOOST_TEST(enter("a1-db.scope", "a1", 100));
    BOOST_TEST(started().empty());
    // 200 * 2^5 still fits the scale: the allocation's slice and its
    // bucket weigh twice what they did (one call each; no sibling is
    // rewritten), and the first task's weight goes to its scope (it no
    // longer has the allocation alone).
    BOOST_TEST(weightOf(p.allocation) == 6400u);
    BOOST_TEST(systemd.count("setUnitProperties") == 3u);
    BOOST_TEST(systemd.count("setUnitProperties", "a1-web.scope") == 1u);
    BOOST_TEST(systemd.count("setUnitProperties", p.allocation) == 1u);
    BOOST_TEST(systemd.count("setUnitProperties", p.chain[1]) == 1u);
    BOOST_TEST(slices.membersOf(p.allocation) == 2u);
}

// Issue 49: a scope with a weight wants the cpu controller, and each cpu
// cgroup is one more step of the kernel's walk at every cpu.max write.
BOOST_FIXTURE_TEST_CASE(a_task_alone_in_its_allocation_leaves_its_weight_to_the_slice, Fixture) {
    std::vector<std::string> moved;
    slices.onWeightMoved([&](const std::string& unit) { moved.push_back(unit); });
    enter("a1-web.scope", "a1", 500);
    BOOST_TEST(!carries.at("a1-web.scope"));
    BOOST_TEST(!slices.weightOnScope("a1-web.scope"));
    BOOST_TEST(systemd.count("setUnitProperties") == 0u);
    // A second task: the first's weight goes to its scope before the
    // second's start is sent (one connection: systemd takes them in order),
    // and the second starts with its own.
    systemd.calls.clear();
    enter("a1-db.scope", "a1", 300);
    BOOST_TEST(carries.at("a1-db.scope"));
    BOOST_REQUIRE(systemd.calls.size() >= 2u);
    BOOST_TEST(systemd.calls[0].method == "setUnitProperties");
    BOOST_TEST(systemd.calls[0].unit == "a1-web.scope");
    BOOST_TEST(weightOf("a1-web.scope") == scope::cpuWeightFromShares(500));
    BOOST_TEST(systemd.calls[1].method == "startScope");
    BOOST_TEST(slices.weightOnScope("a1-web.scope"));
    BOOST_TEST(slices.weightOnScope("a1-db.scope"));
    BOOST_TEST(moved == std::vector<std::string>{"a1-web.scope"});
    // Weights stay once set: the second leaves, a third comes, nothing is
    // sent to the first again.
    slices.leave("a1-db.scope");
    systemd.calls.clear();
    enter("a1-log.scope", "a1", 100);
    BOOST_TEST(carries.at("a1-log.scope"));
    BOOST_TEST(systemd.count("setUnitProperties", "a1-web.scope") == 0u);
    BOOST_TEST(moved.size() == 1u);
    // A task not known here (a flat one) has its weight on its scope.
    BOOST_TEST(slices.weightOnScope("elsewhere.scope"));
}

BOOST_FIXTURE_TEST_CASE(a_task_that_ended_leaves_the_next_alone, Fixture) {
    enter("a1-init.scope", "a1", 100);
    slices.stopped("a1-init.scope");  // a prestart task that ran to its end
    systemd.calls.clear();
    enter("a1-web.scope", "a1", 500);
    BOOST_TEST(!carries.at("a1-web.scope"));
    BOOST_TEST(systemd.count("setUnitProperties", "a1-init.scope") == 0u);
}

BOOST_FIXTURE_TEST_CASE(a_task_with_a_quota_keeps_its_weight_and_one_without_shares_needs_no_call, Fixture) {
    spec::Resources quota;
    quota.cpuShares = 500;
    quota.cpuQuotaPercent = 50;
    auto claimed = slices.claim("a1-web.scope", "a1", false);
    BOOST_REQUIRE(claimed.ok());
    slices.enter("a1-web.scope", *claimed, AllocationSlices::taskCpu(quota), scopeStart("a1-web.scope"),
                 [](common::Result<void>) {}, [](common::Result<void>) {});
    BOOST_TEST(carries.at("a1-web.scope"));  // its scope has the cpu controller anyway
    // Two tasks that asked no shares weigh the kernel's default on their
    // scopes: the second's start sends nothing for the first.
    spec::Resources none;
    for (const auto* unit : {"a2-web.scope", "a2-db.scope"}) {
        auto c = slices.claim(unit, "a2", false);
        BOOST_REQUIRE(c.ok());
        slices.enter(unit, *c, AllocationSlices::taskCpu(none), scopeStart(unit), [](common::Result<void>) {},
                     [](common::Result<void>) {});
    }
    BOOST_TEST(systemd.count("setUnitProperties", "a2-web.scope") == 0u);
    BOOST_TEST(slices.weightOnScope("a2-web.scope"));
    BOOST_TEST(AllocationSlices::taskCpu(none).shares == scope::sharesOfDefaultWeight());
}

BOOST_FIXTURE_TEST_CASE(a_restored_lone_task_gets_its_weight_when_a_second_starts, Fixture) {
    const auto p = place("a1");
    slices.restore("a1-web.scope", p.allocation, p.allocation, cpu(500), true, "", /*onScope=*/false);
    slices.restore("a2-web.scope", place("a2").allocation, "", cpu(500), true);  // an older manager's: on its scope
    BOOST_TEST(!slices.weightOnScope("a1-web.scope"));
    BOOST_TEST(slices.weightOnScope("a2-web.scope"));
    enter("a1-db.scope", "a1", 100);
    BOOST_TEST(systemd.count("setUnitProperties", "a1-web.scope") == 1u);
    BOOST_TEST(slices.weightOnScope("a1-web.scope"));
    enter("a2-db.scope", "a2", 100);
    BOOST_TEST(systemd.count("setUnitProperties", "a2-web.scope") == 0u);
}

BOOST_FIXTURE_TEST_CASE(allocations_weigh_the_sums_of_their_running_tasks, Fixture) {
    // The guest's fairness test: one task of 1000 shares against four of
    // 250: the same CPU asked (shares are summed before they are mapped).
    const uint64_t one = 1000, quarter = 250;
    enter("big-t.scope", "big", one);
    for (int i = 0; i < 4; ++i) enter("small-t" + std::to_string(i) + ".scope", "small", quarter);
    const auto big = place("big"), small = place("small");
    const double sumRatio = double(one) / double(4 * quarter);
    // The level where the two meet: their own slices if they share a
    // bucket, else their buckets.
    const bool sameBucket = big.chain[1] == small.chain[1];
    const auto& a = sameBucket ? big.allocation : big.chain[1];
    const auto& b = sameBucket ? small.allocation : small.chain[1];
    BOOST_TEST(double(weightOf(a)) / double(weightOf(b)) == sumRatio, boost::test_tools::tolerance(0.01));
    // A task that ends no longer counts.
    slices.stopped("small-t0.scope");
    slices.stopped("small-t1.scope");
    BOOST_TEST(double(weightOf(a)) / double(weightOf(b)) == double(one) / double(2 * quarter),
               boost::test_tools::tolerance(0.01));
}

BOOST_FIXTURE_TEST_CASE(reserved_tasks_go_below_the_reserve_slice_without_buckets, Fixture) {
    const auto p = place("a1", true);
    BOOST_TEST(enter("a1-web.scope", "a1", 100, true));
    BOOST_TEST(started() == (std::vector<std::string>{"nomad-reserve.slice", p.allocation}));
    BOOST_TEST(p.allocation == "nomad-reserve-a1.slice");
    // The same allocation's shared task has a slice of its own in the share tree.
    BOOST_TEST(enter("a1-side.scope", "a1", 100));
    BOOST_TEST(slices.allocationOf("a1-side.scope") != p.allocation);
}

BOOST_FIXTURE_TEST_CASE(the_last_task_forgotten_removes_the_allocation_slice, Fixture) {
    const auto p = place("a1");
    enter("a1-web.scope", "a1", 100);
    enter("a1-db.scope", "a1", 100);
    slices.stopped("a1-web.scope");
    slices.leave("a1-web.scope");
    BOOST_TEST(systemd.count("stopUnit") == 0u);
    slices.leave("a1-db.scope");
    BOOST_TEST(systemd.count("stopUnit", p.allocation) == 1u);
    // The bucket and the share slice stay.
    BOOST_TEST(systemd.count("stopUnit") == 1u);
    BOOST_TEST(slices.allocationSlices().empty());
    BOOST_TEST(!slices.holdsAllocationSlice(p.allocation));
}

BOOST_FIXTURE_TEST_CASE(a_start_racing_the_removal_waits_and_makes_the_slice_again, Fixture) {
    const auto p = place("a1");
    enter("a1-web.scope", "a1", 100);
    systemd.hold("stopUnit");
    slices.leave("a1-web.scope");
    BOOST_TEST(systemd.parked.size() == 1u);
    bool issued = false;
    std::optional<bool> made;
    auto start = scopeStart("a1-db.scope");
    slices.enter(
        "a1-db.scope", p, cpu(100),
        [&](const scope::AuxUnits& aux, bool carry, AllocationSlices::Completion started) {
            issued = true;
            start(aux, carry, std::move(started));
        },
        [](common::Result<void>) {}, [&](common::Result<void> r) { made = r.ok(); });
    BOOST_TEST(!issued);  // its scope's start would come before the stop ends
    systemd.calls.clear();
    systemd.release();
    BOOST_TEST(issued);
    BOOST_TEST(made.value_or(false));
    BOOST_TEST(starts(p.allocation) == 1u);
    BOOST_TEST(slices.membersOf(p.allocation) == 1u);
}

// A drain forgets thousands of allocations: their removals go a few at a
// time, so that PID 1's bus has pauses in which it runs a new task's jobs.
BOOST_FIXTURE_TEST_CASE(removals_go_a_few_at_a_time_and_a_start_takes_back_one_not_sent, Fixture) {
    const std::vector<std::string> allocs{"a1", "b1", "c1", "d1", "e1", "f1"};
    std::map<std::string, scope::TaskSlices> p;
    for (const auto& a : allocs) {
        p[a] = place(a);
        enter(a + "-t.scope", a, 100);
    }
    systemd.hold("stopUnit");
    for (const auto& a : allocs) slices.leave(a + "-t.scope");
    // Four go; e1 and f1 wait for a slot.
    BOOST_TEST(systemd.count("stopUnit") == 4u);
    for (const char* a : {"a1", "b1", "c1", "d1"}) BOOST_TEST(systemd.count("stopUnit", p[a].allocation) == 1u);
    // f1 gets a task again while its removal waits: nothing to wait for,
    // nothing to make (the slice is there).
    const auto made = systemd.count("auxSlice") + systemd.count("startSlice");
    BOOST_TEST(enter("f1-u.scope", "f1", 100));
    BOOST_TEST(systemd.count("auxSlice") + systemd.count("startSlice") == made);
    BOOST_TEST(systemd.count("stopUnit", p["e1"].allocation) == 0u);
    // A slot given back: e1 goes, f1 never.
    BOOST_TEST(systemd.release(p["a1"].allocation) == 1u);
    BOOST_TEST(systemd.count("stopUnit", p["e1"].allocation) == 1u);
    BOOST_TEST(systemd.release() == 4u);
    BOOST_TEST(systemd.count("stopUnit", p["f1"].allocation) == 0u);
    BOOST_TEST(systemd.count("stopUnit") == 5u);
    BOOST_TEST(slices.membersOf(p["f1"].allocation) == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_start_that_ends_while_waiting_for_a_removal_leaves_nothing, Fixture) {
    const auto p = place("a1");
    enter("a1-web.scope", "a1", 100);
    systemd.hold("stopUnit");
    slices.leave("a1-web.scope");
    bool issued = false;
    slices.enter(
        "a1-db.scope", p, cpu(100), [&](const scope::AuxUnits&, bool, AllocationSlices::Completion) { issued = true; },
        [](common::Result<void>) {}, [](common::Result<void>) {});
    slices.leave("a1-db.scope");
    systemd.release();
    BOOST_TEST(!issued);
    BOOST_TEST(slices.membersOf(p.allocation) == 0u);
    BOOST_TEST(slices.allocationSlices().empty());
}

BOOST_FIXTURE_TEST_CASE(a_slice_that_exists_gets_our_properties, Fixture) {
    const auto p = place("a1");
    systemd.addScope(p.allocation, p.chain[1], 1);  // an earlier manager's
    // systemd refuses the scope's call that carries it; the slices are
    // started on their own, and the scope is asked again without them.
    BOOST_TEST(enter("a1-web.scope", "a1", 100));
    BOOST_TEST(systemd.count("startSlice") == 3u);
    BOOST_TEST(systemd.count("setUnitProperties", p.allocation) == 1u);
    BOOST_TEST(weightOf(p.allocation) == 3200u);
    BOOST_TEST(systemd.count("startScope", "a1-web.scope") == 2u);
}

BOOST_FIXTURE_TEST_CASE(a_slice_that_cannot_be_made_fails_the_task, Fixture) {
    const auto p = place("a1");
    systemd.addScope(p.allocation, p.chain[1], 1);
    systemd.failNext("setUnitProperties", common::makeError("SystemdFailed", "no"));
    BOOST_TEST(!enter("a1-web.scope", "a1", 100));
}

BOOST_FIXTURE_TEST_CASE(a_task_waits_for_the_call_that_carries_its_slices_not_for_its_job, Fixture) {
    const auto p = place("a1");
    systemd.hold("startScope");
    std::optional<bool> secondMade;
    for (const auto* unit : {"a1-web.scope", "a1-db.scope"}) {
        auto claimed = slices.claim(unit, "a1", false);
        BOOST_REQUIRE(claimed.ok());
        slices.enter(unit, *claimed, cpu(100), scopeStart(unit), [](common::Result<void>) {},
                     [&, unit](common::Result<void> r) {
                         if (std::string(unit) == "a1-db.scope") secondMade = r.ok();
                     });
    }
    BOOST_TEST(systemd.count("auxSlice") == 3u);
    BOOST_TEST(secondMade.value_or(false));  // the first's job is still held
}

BOOST_FIXTURE_TEST_CASE(slices_a_refused_call_carried_are_made_for_the_tasks_waiting_on_them, Fixture) {
    const auto p = place("a1");
    systemd.hold("startScope");
    systemd.failNext("startScope", common::makeError("SystemdFailed", "refused"));
    std::optional<bool> firstScope, secondMade;
    for (const auto* unit : {"a1-web.scope", "a1-db.scope"}) {
        auto claimed = slices.claim(unit, "a1", false);
        BOOST_REQUIRE(claimed.ok());
        const bool first = std::string(unit) == "a1-web.scope";
        slices.enter(
            unit, *claimed, cpu(100), scopeStart(unit),
            [&, first](common::Result<void> r) {
                if (first) firstScope = r.ok();
            },
            [&, first](common::Result<void> r) {
                if (!first) secondMade = r.ok();
            });
    }
    // The second waits for the slices the first's call carries.
    BOOST_TEST(systemd.count("startScope") == 2u);
    BOOST_TEST(!secondMade.has_value());
    systemd.hold("startScope", false);
    systemd.release();
    BOOST_TEST(!firstScope.value_or(true));
    BOOST_TEST(systemd.count("startSlice") == 3u);
    BOOST_TEST(secondMade.value_or(false));
    BOOST_TEST(weightOf(p.allocation) == 6400u);
}

BOOST_FIXTURE_TEST_CASE(the_shared_pool_is_one_call_on_the_share_slice, Fixture) {
    bool done = false;
    slices.setSharedCpus({0, 1}, [&](common::Result<void> r) { done = r.ok(); });
    BOOST_TEST(done);
    BOOST_TEST(systemd.count("setUnitProperties") == 0u);  // nothing made yet
    for (int i = 0; i < 5; ++i) enter("a" + std::to_string(i) + "-t.scope", "a" + std::to_string(i), 100);
    BOOST_TEST(systemd.propertyOf("nomad-share.slice", "AllowedCPUs")->get<std::vector<uint8_t>>() ==
               std::vector<uint8_t>{0x3});
    systemd.calls.clear();
    slices.setSharedCpus({0, 1, 2}, [](common::Result<void>) {});
    BOOST_TEST(systemd.calls.size() == 1u);
    BOOST_TEST(systemd.count("setUnitProperties", "nomad-share.slice") == 1u);
}

BOOST_FIXTURE_TEST_CASE(restored_tasks_get_their_weights_again, Fixture) {
    const auto p = place("a1");
    // A layout of another fan-out: the chain comes from the slice's name.
    const std::string other = "nomad-share-b03-a1.slice";
    slices.restore("a1-web.scope", other, "", cpu(100), true);
    slices.restore("a1-old.scope", other, "", cpu(100), false);
    slices.restore("a2-web.scope", "nomad-share-b03-a2.slice", "", cpu(300), true);
    slices.reapplyWeights();
    // a2 weighs 3 times a1 in their bucket; the bucket alone in the share slice.
    BOOST_TEST(weightOf("nomad-share-b03-a2.slice") == 3 * weightOf(other));
    BOOST_TEST(systemd.count("setUnitProperties", "nomad-share-b03.slice") == 1u);
    BOOST_TEST(slices.membersOf(other) == 2u);
    slices.leave("a1-web.scope");
    slices.leave("a1-old.scope");
    BOOST_TEST(systemd.count("stopUnit", other) == 1u);
}

// A restarted manager reads what each slice holds (the registry, from its
// cgroup's cpu.weight on v2) and sends only the weights that differ.
BOOST_FIXTURE_TEST_CASE(restored_slices_that_hold_their_weight_are_not_sent_it_again, Fixture) {
    const std::string a1 = "nomad-share-b03-a1.slice", a2 = "nomad-share-b03-a2.slice";
    const std::string bucket = "/nomad.slice/nomad-share.slice/nomad-share-b03.slice";
    auto restoreAll = [&](AllocationSlices& s) {
        s.restore("a1-web.scope", a1, "", cpu(100), true, bucket + "/" + a1 + "/a1-web.scope");
        s.restore("a2-web.scope", a2, "", cpu(300), true, bucket + "/" + a2 + "/a2-web.scope");
        s.restore("a3-web.scope", "nomad-share-b03-a3.slice", "", cpu(100), true);  // its cgroup not known
    };
    restoreAll(slices);
    const auto cgroups = slices.weighedSliceCgroups();
    BOOST_TEST(cgroups.size() == 3u);  // the bucket and two allocations; not a3, not the share slice
    BOOST_TEST(cgroups.at(a1) == bucket + "/" + a1);
    BOOST_TEST(cgroups.at("nomad-share-b03.slice") == bucket);
    slices.reapplyWeights();
    const auto sentFirst = systemd.count("setUnitProperties");
    BOOST_TEST(sentFirst == 4u);
    // The next manager finds every weight in place but a1's.
    std::map<std::string, uint64_t> held;
    for (const auto& [slice, cgroup] : cgroups) held[slice] = weightOf(slice);
    held[a1] += 1;
    AllocationSlices next{scope::SliceLayout{"nomad.slice", 64, 100}, systemd};
    restoreAll(next);
    next.heldWeights(held);
    systemd.calls.clear();
    next.reapplyWeights();
    BOOST_TEST(systemd.count("setUnitProperties") == 2u);  // a1's, and a3's (not known)
    BOOST_TEST(systemd.count("setUnitProperties", a1) == 1u);
    BOOST_TEST(systemd.count("setUnitProperties", "nomad-share-b03-a3.slice") == 1u);
}

// An upgrade from a manager that put each parent's heaviest child in
// (5000, 10000] (before stop 49): the scale the weights systemd holds imply
// is kept, as it fits, so no weight is sent but the one systemd does not
// hold. (Fitted afresh, the bucket alone in the share slice would weigh
// 500 * 2^3 = 4000, and be sent.)
BOOST_FIXTURE_TEST_CASE(an_upgrade_keeps_the_scale_systemd_holds, Fixture) {
    const std::string a1 = "nomad-share-b03-a1.slice", a2 = "nomad-share-b03-a2.slice";
    const std::string bucket = "/nomad.slice/nomad-share.slice/nomad-share-b03.slice";
    slices.restore("a1-web.scope", a1, "", cpu(100), true, bucket + "/" + a1 + "/a1-web.scope");
    slices.restore("a2-web.scope", a2, "", cpu(300), true, bucket + "/" + a2 + "/a2-web.scope");
    slices.restore("a3-web.scope", "nomad-share-b03-a3.slice", "", cpu(100), true);  // its cgroup not known
    // The older band's weights: 2^5 in the bucket (a2, 300, the heaviest:
    // 9600), 2^4 in the share slice (the bucket, 500: 8000).
    slices.heldWeights({{a1, 3200}, {a2, 9600}, {"nomad-share-b03.slice", 8000}});
    slices.reapplyWeights();
    BOOST_TEST(systemd.count("setUnitProperties") == 1u);
    BOOST_TEST(systemd.count("setUnitProperties", "nomad-share-b03-a3.slice") == 1u);
    BOOST_TEST(weightOf("nomad-share-b03-a3.slice") == 3200u);  // on the scale a1 (100) holds
}

BOOST_FIXTURE_TEST_CASE(a_changed_task_weight_moves_its_slices_weights, Fixture) {
    enter("a1-web.scope", "a1", 100);
    enter("a2-web.scope", "a2", 100);
    const auto a1 = place("a1"), a2 = place("a2");
    const bool sameBucket = a1.chain[1] == a2.chain[1];
    const auto& x = sameBucket ? a1.allocation : a1.chain[1];
    const auto& y = sameBucket ? a2.allocation : a2.chain[1];
    BOOST_TEST(weightOf(x) == weightOf(y));
    slices.reweigh("a1-web.scope", cpu(300));
    BOOST_TEST(weightOf(x) == 3 * weightOf(y));
}

namespace {

/// A cap of two scopes per slice, so that overflow shows with a few tasks.
struct SmallCap : Fixture {
    SmallCap() : Fixture(2) {}
    scope::TaskSlices claim(const std::string& unit, const std::string& alloc) {
        auto c = slices.claim(unit, alloc, false);
        BOOST_REQUIRE(c.ok());
        return *c;
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(an_allocation_past_the_cap_grows_into_overflow_slices, SmallCap) {
    const auto p = place("a1");
    for (int i = 0; i < 5; ++i) BOOST_TEST(enter("a1-t" + std::to_string(i) + ".scope", "a1", 100));
    const auto o1 = scope::overflowSlice(p.allocation, 1), o2 = scope::overflowSlice(p.allocation, 2);
    // Made once each, inside the allocation's slice, as it grew.
    BOOST_TEST(starts(p.allocation) == 1u);
    BOOST_TEST(starts(o1) == 1u);
    BOOST_TEST(starts(o2) == 1u);
    BOOST_TEST(starts(scope::overflowSlice(p.allocation, 3)) == 0u);
    // Beside two scopes, an overflow slice weighs its tasks' scope weights
    // summed, unscaled.
    BOOST_TEST(weightOf(o1) == 2 * scope::cpuWeightFromShares(100));
    BOOST_TEST(weightOf(o2) == scope::cpuWeightFromShares(100));
    for (int i = 0; i < 5; ++i) BOOST_TEST(slices.allocationOf("a1-t" + std::to_string(i) + ".scope") == p.allocation);
    BOOST_TEST(slices.membersOf(p.allocation) == 5u);
    BOOST_TEST(slices.allocationSlices() == std::set<std::string>{p.allocation});
    // Asked of one slice (the reconciler's question), the same answer.
    BOOST_TEST(slices.holdsAllocationSlice(p.allocation));
    BOOST_TEST(!slices.holdsAllocationSlice(o1));
    BOOST_TEST(!slices.holdsAllocationSlice(p.chain[p.chain.size() - 2]));  // its bucket
    BOOST_TEST(!slices.holdsAllocationSlice(scope::overflowSlice(p.allocation, 3)));
    // A place freed in the allocation's own slice is taken first.
    slices.leave("a1-t0.scope");
    const auto t5 = claim("a1-t5.scope", "a1");
    BOOST_TEST(t5.parent() == p.allocation);
    slices.enter("a1-t5.scope", t5, cpu(100), scopeStart("a1-t5.scope"), [](common::Result<void>) {},
                 [](common::Result<void>) {});
    // The overflow tasks keep the allocation: only the last one removes it,
    // and its overflow slices go with it (one stop).
    for (int i = 1; i < 5; ++i) slices.leave("a1-t" + std::to_string(i) + ".scope");
    BOOST_TEST(systemd.count("stopUnit") == 0u);
    slices.leave("a1-t5.scope");
    BOOST_TEST(systemd.count("stopUnit") == 1u);
    BOOST_TEST(systemd.count("stopUnit", p.allocation) == 1u);
}

BOOST_FIXTURE_TEST_CASE(starts_under_way_hold_their_places, SmallCap) {
    const auto p = place("a1");
    BOOST_TEST(claim("a1-x.scope", "a1").parent() == p.allocation);
    BOOST_TEST(claim("a1-y.scope", "a1").parent() == p.allocation);
    BOOST_TEST(claim("a1-z.scope", "a1").parent() == scope::overflowSlice(p.allocation, 1));
    // A start that fails before its task enters gives its place back.
    slices.leave("a1-x.scope");
    BOOST_TEST(claim("a1-w.scope", "a1").parent() == p.allocation);
    // Claiming again moves the unit's place rather than taking a second.
    BOOST_TEST(claim("a1-w.scope", "a1").parent() == p.allocation);
    BOOST_TEST(claim("a1-v.scope", "a1").parent() == scope::overflowSlice(p.allocation, 1));
    BOOST_TEST(systemd.calls.empty());  // nothing asked of systemd before a task enters
}

BOOST_FIXTURE_TEST_CASE(restored_overflow_tasks_count_in_their_allocation, SmallCap) {
    const auto p = place("a1");
    const auto o1 = scope::overflowSlice(p.allocation, 1);
    slices.restore("a1-a.scope", p.allocation, p.allocation, cpu(100), true);
    slices.restore("a1-b.scope", p.allocation, p.allocation, cpu(100), true);
    slices.restore("a1-c.scope", o1, p.allocation, cpu(300), true);
    slices.reapplyWeights();
    BOOST_TEST(weightOf(o1) == scope::cpuWeightFromShares(300));  // one task of 300 shares
    BOOST_TEST(slices.allocationOf("a1-c.scope") == p.allocation);
    BOOST_TEST(slices.membersOf(p.allocation) == 3u);
    // The allocation's own slice is full: a new task goes beside c.
    BOOST_TEST(claim("a1-d.scope", "a1").parent() == o1);
    slices.leave("a1-d.scope");
    slices.leave("a1-a.scope");
    slices.leave("a1-b.scope");
    slices.leave("a1-c.scope");
    BOOST_TEST(systemd.count("stopUnit") == 1u);
    BOOST_TEST(systemd.count("stopUnit", p.allocation) == 1u);
}

BOOST_FIXTURE_TEST_CASE(share_and_bucket_are_made_once_allocations_again_after_their_last_task, Fixture) {
    // Short tasks, one after the other: each finds its allocation's slice
    // without a running task (an operator may have stopped it), so that is
    // read (one call); share and bucket stay made, and the weights are
    // what systemd holds already.
    const auto p = place("a1");
    BOOST_TEST(enter("a1-t0.scope", "a1", 100));
    slices.stopped("a1-t0.scope");
    systemd.calls.clear();
    BOOST_TEST(enter("a1-t1.scope", "a1", 100));
    BOOST_TEST(started().empty());
    BOOST_TEST(systemd.count("unitState", p.allocation) == 1u);
    BOOST_TEST(systemd.count("setUnitProperties") == 0u);  // the weight it had
    BOOST_TEST(weightOf(p.allocation) == 3200u);
    BOOST_TEST(weightOf(p.chain[1]) == 3200u);
    // An exit that leaves a slice with no running task sets no weight on it.
    systemd.calls.clear();
    slices.stopped("a1-t1.scope");
    BOOST_TEST(systemd.calls.empty());
    // Stopped and unloaded by an operator: started again.
    systemd.scopes.erase(p.allocation);
    BOOST_TEST(enter("a1-t2.scope", "a1", 100));
    BOOST_TEST(systemd.count("startSlice", p.allocation) == 1u);
    BOOST_TEST(weightOf(p.allocation) == 3200u);
}

BOOST_FIXTURE_TEST_CASE(a_weight_systemd_holds_is_not_set_again, Fixture) {
    // A new allocation beside one whose tasks ended: the bucket comes back
    // to the weight it had.
    const auto a = place("a1");
    enter("a1-t.scope", "a1", 100);
    slices.stopped("a1-t.scope");
    std::string other;
    for (int i = 2; other.empty(); ++i)
        if (place("a" + std::to_string(i)).chain[1] == a.chain[1]) other = "a" + std::to_string(i);
    systemd.calls.clear();
    BOOST_TEST(enter(other + "-t.scope", other, 100));
    BOOST_TEST(systemd.count("setUnitProperties") == 0u);
    BOOST_TEST(started() == std::vector<std::string>{place(other).allocation});
}

BOOST_FIXTURE_TEST_CASE(weights_wait_for_the_starts_under_way_and_go_once_per_slice, Fixture) {
    // A first task makes the slices; while the next three tasks' scopes
    // wait for systemd, their allocation's and bucket's weights change
    // three times: sent once each, when the last scope is answered.
    const auto p = place("a1");
    enter("a1-t0.scope", "a1", 100);
    systemd.calls.clear();
    systemd.hold("startScope");
    for (int i = 1; i <= 3; ++i) {
        const auto unit = "a1-t" + std::to_string(i) + ".scope";
        auto claimed = slices.claim(unit, "a1", false);
        BOOST_REQUIRE(claimed.ok());
        slices.enter(unit, *claimed, cpu(100 * i), scopeStart(unit), [](common::Result<void>) {}, [](common::Result<void>) {});
    }
    // (t0's weight went to its scope with t1's start, once.)
    BOOST_TEST(systemd.count("setUnitProperties", "a1-t0.scope") == 1u);
    auto slicesSet = [&] {
        return systemd.count("setUnitProperties", p.allocation) + systemd.count("setUnitProperties", p.chain[1]);
    };
    BOOST_TEST(slicesSet() == 0u);
    systemd.hold("startScope", false);
    BOOST_TEST(systemd.release("a1-t1.scope") == 1u);
    BOOST_TEST(systemd.release("a1-t2.scope") == 1u);
    BOOST_TEST(slicesSet() == 0u);
    BOOST_TEST(systemd.release() == 1u);
    // 100 + 100 + 200 + 300 = 700: the allocation alone in its bucket, the
    // bucket alone in the share slice, each refitted once on the way (400
    // at 2^5 left the range) to 2^3.
    BOOST_TEST(systemd.count("setUnitProperties", p.allocation) == 1u);
    BOOST_TEST(systemd.count("setUnitProperties", p.chain[1]) == 1u);
    BOOST_TEST(weightOf(p.allocation) == 5600u);
    BOOST_TEST(weightOf(p.chain[1]) == 5600u);
}

namespace {

/// Slices on a real loop, with systemd's answers coming from it, and a
/// short weight interval; one bucket, so that every allocation is a
/// sibling of every other.
struct PacedSlices {
    static constexpr auto kInterval = std::chrono::milliseconds(300);
    common::EventLoop loop;
    FakeSystemdClient systemd{&loop};
    AllocationSlices slices;

    explicit PacedSlices(std::chrono::milliseconds nodeInterval)
        : slices(scope::SliceLayout{"nomad.slice", 1, 100}, systemd, &loop, kInterval, nodeInterval) {}

    void enter(const std::string& unit, const std::string& alloc, uint64_t shares) {
        auto claimed = slices.claim(unit, alloc, false);
        BOOST_REQUIRE(claimed.ok());
        bool answered = false;
        slices.enter(
            unit, *claimed, cpu(shares),
            [this, unit](const scope::AuxUnits& aux, bool, AllocationSlices::Completion started) {
                systemd.startScopeAsync(unit, {}, {}, aux, std::move(started));
            },
            [&](common::Result<void> r) {
                BOOST_TEST(r.ok());
                answered = true;
            },
            [](common::Result<void>) {});
        BOOST_REQUIRE(test::runUntil(loop, [&] { return answered; }));
    }
    uint64_t weightOf(const std::string& slice) {
        auto v = systemd.propertyOf(slice, "CPUWeight");
        BOOST_REQUIRE(v.has_value());
        return v->get<uint64_t>();
    }
    /// Turns the loop for `d`.
    void idle(std::chrono::milliseconds d) {
        const auto until = common::EventLoop::Clock::now() + d;
        test::runUntil(loop, [&] { return common::EventLoop::Clock::now() >= until; });
    }
};

/// Paced per slice only.
struct Paced : PacedSlices {
    Paced() : PacedSlices(std::chrono::milliseconds(0)) {}
};

/// Paced per slice and node-wide.
struct NodePaced : PacedSlices {
    static constexpr auto kNodeInterval = std::chrono::milliseconds(200);
    NodePaced() : PacedSlices(kNodeInterval) {}
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_slice_gets_a_new_weight_at_most_once_per_interval, Paced) {
    enter("a1-t.scope", "a1", 100);
    enter("a2-t.scope", "a2", 100);
    const auto a1 = *slices.place(std::string("a1"), false);
    idle(std::chrono::milliseconds(50));
    systemd.calls.clear();

    // a2 grows fourfold (past the scale): a1's weight shrinks. Its first
    // change goes at once.
    const auto first = common::EventLoop::Clock::now();
    slices.reweigh("a2-t.scope", cpu(400));
    idle(std::chrono::milliseconds(50));
    BOOST_TEST(systemd.count("setUnitProperties", a1.allocation) == 1u);
    const auto quartered = weightOf(a1.allocation);

    // Two more changes right after: they wait for the interval, and go as
    // one call with the last weight.
    slices.reweigh("a2-t.scope", cpu(1600));
    slices.reweigh("a2-t.scope", cpu(6400));
    idle(std::chrono::milliseconds(100));
    BOOST_TEST(systemd.count("setUnitProperties", a1.allocation) == 1u);
    BOOST_TEST(weightOf(a1.allocation) == quartered);
    BOOST_REQUIRE(test::runUntil(loop, [&] { return systemd.count("setUnitProperties", a1.allocation) == 2u; }));
    BOOST_TEST((common::EventLoop::Clock::now() - first >= kInterval));
    // 6400 against 100: the ratio survives the pacing.
    BOOST_TEST(weightOf(a1.allocation) * 64 == weightOf(slices.place(std::string("a2"), false)->allocation));
    BOOST_TEST(weightOf(a1.allocation) * 16 == quartered);
    idle(kInterval * 2);
    BOOST_TEST(systemd.count("setUnitProperties", a1.allocation) == 2u);
}

BOOST_FIXTURE_TEST_CASE(a_weight_unchanged_for_the_interval_goes_at_once, Paced) {
    enter("a1-t.scope", "a1", 100);
    enter("a2-t.scope", "a2", 100);
    const auto a1 = *slices.place(std::string("a1"), false);
    // Fourfold each time: past the scale, so a1's weight changes too.
    slices.reweigh("a2-t.scope", cpu(400));
    BOOST_REQUIRE(test::runUntil(loop, [&] { return systemd.count("setUnitProperties", a1.allocation) == 1u; }));
    idle(kInterval + std::chrono::milliseconds(50));
    slices.reweigh("a2-t.scope", cpu(1600));
    idle(std::chrono::milliseconds(50));
    BOOST_TEST(systemd.count("setUnitProperties", a1.allocation) == 2u);
}

BOOST_FIXTURE_TEST_CASE(weights_go_one_per_node_interval_the_furthest_off_first, NodePaced) {
    // Four allocations of 100 shares in one bucket: 3200 each.
    for (const char* a : {"a1", "a2", "a3", "a4"}) enter(std::string(a) + "-t.scope", a, 100);
    idle(kInterval + std::chrono::milliseconds(100));  // past every slice's own interval
    const auto sliceOf = [&](const char* a) { return slices.place(std::string(a), false)->allocation; };
    systemd.calls.clear();
    // Every weight call, with when it was seen.
    std::vector<std::pair<std::string, common::EventLoop::Clock::time_point>> sent;
    const auto follow = [&] {
        size_t k = 0;
        for (const auto& c : systemd.calls)
            if (c.method == "setUnitProperties" && k++ == sent.size())
                sent.emplace_back(c.unit, common::EventLoop::Clock::now());
    };
    // a4 grows by 1% (its bucket by a quarter of that), then, at once, a3
    // by half and a2 by a tenth, under the same scale. They go one per
    // node interval, and a3, further off, before a2 (which sorts first).
    slices.reweigh("a4-t.scope", cpu(101));
    slices.reweigh("a3-t.scope", cpu(150));
    slices.reweigh("a2-t.scope", cpu(110));
    const auto until = common::EventLoop::Clock::now() + 5 * kNodeInterval + kInterval;
    test::runUntil(loop, [&] {
        follow();
        return common::EventLoop::Clock::now() >= until;
    });
    std::vector<std::string> order;
    for (size_t k = 0; k < sent.size(); ++k) {
        order.push_back(sent[k].first);
        if (k) BOOST_TEST((sent[k].second - sent[k - 1].second >= kNodeInterval - std::chrono::milliseconds(5)));
    }
    const auto at = [&](const std::string& unit) { return std::find(order.begin(), order.end(), unit) - order.begin(); };
    BOOST_TEST(systemd.count("setUnitProperties", sliceOf("a1")) == 0u);
    for (const char* a : {"a2", "a3", "a4"}) BOOST_TEST(systemd.count("setUnitProperties", sliceOf(a)) == 1u);
    BOOST_TEST(at(sliceOf("a3")) < at(sliceOf("a2")));
    // Every ratio is the shares' in the end: 100:110:150:101.
    BOOST_TEST(weightOf(sliceOf("a3")) == 4800u);
    BOOST_TEST(weightOf(sliceOf("a2")) == 3520u);
    BOOST_TEST(weightOf(sliceOf("a4")) == 3232u);
    BOOST_TEST(weightOf(sliceOf("a1")) == 3200u);
}
