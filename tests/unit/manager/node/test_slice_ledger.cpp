// The slice ledger alone (src/manager/node/slice_ledger.cpp): places, sums
// and the decisions they make, checked on plain values, no fake in sight.
#define BOOST_TEST_MODULE slice_ledger
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "manager/node/slice_ledger.hpp"

using namespace taskscope;
using manager::SliceLedger;
using Make = SliceLedger::Make;

namespace {

SliceLedger::TaskCpu cpu(uint64_t shares) {
    spec::Resources r;
    r.cpuShares = shares;
    return SliceLedger::taskCpu(r);
}

struct Ledger {
    SliceLedger ledger;
    explicit Ledger(unsigned cap = 100) : ledger{scope::SliceLayout{"nomad.slice", 64, cap}} {}

    scope::TaskSlices claim(const std::string& unit, const std::string& alloc, bool reserved = false) {
        auto p = ledger.claim(unit, alloc, reserved);
        BOOST_REQUIRE(p.ok());
        return *p;
    }
    /// Claims and enters; every slice the entry makes is settled as made.
    SliceLedger::Entry enter(const std::string& unit, const std::string& alloc, uint64_t shares) {
        auto entry = ledger.enter(unit, claim(unit, alloc), cpu(shares));
        for (const auto& [slice, make] : entry.chain)
            if (make != Make::None && make != Make::Wait) ledger.settled(slice, true);
        return entry;
    }
    static std::vector<Make> makes(const SliceLedger::Entry& e) {
        std::vector<Make> out;
        for (const auto& [slice, make] : e.chain) out.push_back(make);
        return out;
    }
    static std::map<std::string, uint64_t> asMap(const SliceLedger::WeightChanges& changes) {
        return {changes.begin(), changes.end()};
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_first_task_makes_its_whole_chain_in_its_scopes_call, Ledger) {
    const auto p = claim("a1-web.scope", "a1");
    const auto e = ledger.enter("a1-web.scope", p, cpu(100));
    BOOST_TEST(p.chain.size() == 3u);
    BOOST_TEST((makes(e) == std::vector<Make>{Make::Carry, Make::Carry, Make::Carry}));
    // Their starts carry their weights: none to set on its own.
    BOOST_TEST(e.weights.empty());
    BOOST_TEST(e.toScopes.empty());
    BOOST_TEST((ledger.weightOf(p.allocation) == 3200u));
    BOOST_TEST((ledger.weightOf(p.chain[1]) == 3200u));
    BOOST_TEST(!ledger.weightOf(p.chain[0]).has_value());  // the share slice weighs the default
    BOOST_TEST(!ledger.weightOnScope("a1-web.scope"));
    BOOST_TEST(ledger.allocationOf("a1-web.scope") == p.allocation);
    BOOST_TEST(ledger.holdsAllocationSlice(p.allocation));
}

BOOST_FIXTURE_TEST_CASE(a_second_task_moves_the_first_weight_to_its_scope_and_makes_nothing, Ledger) {
    const auto p = claim("a1-web.scope", "a1");
    enter("a1-web.scope", "a1", 500);
    const auto e = enter("a1-db.scope", "a1", 100);
    BOOST_TEST((makes(e) == std::vector<Make>{Make::None, Make::None, Make::None}));
    BOOST_REQUIRE(e.toScopes.size() == 1u);
    BOOST_TEST(e.toScopes[0].first == "a1-web.scope");
    BOOST_TEST((e.toScopes[0].second == scope::cpuWeightFromShares(500)));
    BOOST_TEST(ledger.weightOnScope("a1-web.scope"));
    BOOST_TEST(ledger.weightOnScope("a1-db.scope"));
    // The allocation and its bucket each weigh the new sum, in one change.
    const auto w = asMap(e.weights);
    BOOST_TEST(w.size() == 2u);
    BOOST_TEST(w.at(p.allocation) == *ledger.weightOf(p.allocation));
    BOOST_TEST(w.count(p.chain[1]) == 1u);
    BOOST_TEST(ledger.membersOf(p.allocation) == 2u);
}

BOOST_FIXTURE_TEST_CASE(a_slice_another_start_is_making_is_waited_for, Ledger) {
    const auto p1 = claim("a1-web.scope", "a1");
    ledger.enter("a1-web.scope", p1, cpu(100));  // not settled: its start is under way
    const auto p2 = claim("a1-db.scope", "a1");
    const auto e = ledger.enter("a1-db.scope", p2, cpu(100));
    BOOST_TEST((makes(e) == std::vector<Make>{Make::Wait, Make::Wait, Make::Wait}));
    BOOST_TEST(ledger.settled(p1.allocation, true));
    BOOST_TEST(!ledger.settled("nomad-share-b99-nobody.slice", true));
}

BOOST_FIXTURE_TEST_CASE(a_task_back_in_a_made_allocation_slice_reads_it, Ledger) {
    const auto p = claim("a1-web.scope", "a1");
    enter("a1-web.scope", "a1", 100);
    ledger.stopped("a1-web.scope");
    // Its slices have no running task now; the allocation's may have been
    // stopped by an operator meanwhile, share and bucket stay.
    const auto e = enter("a1-db.scope", "a1", 100);
    BOOST_TEST((makes(e) == std::vector<Make>{Make::None, Make::None, Make::Refresh}));
    BOOST_TEST((ledger.weightDue(p.allocation) == ledger.weightOf(p.allocation)));
}

BOOST_FIXTURE_TEST_CASE(stopping_takes_the_task_out_of_the_sums, Ledger) {
    const auto p = claim("a1-web.scope", "a1");
    enter("a1-web.scope", "a1", 100);
    enter("a2-web.scope", "a2", 100);
    const auto changes = ledger.stopped("a1-web.scope");
    BOOST_TEST(!ledger.weightDue(p.allocation).has_value());  // no running task: no weight due
    // A slice with no running task gets no weight; what is left is rescaled.
    BOOST_TEST(asMap(changes).count(p.allocation) == 0u);
    BOOST_TEST(ledger.stopped("a1-web.scope").empty());  // once
    BOOST_TEST(ledger.membersOf(p.allocation) == 1u);    // stopped, not gone
}

BOOST_FIXTURE_TEST_CASE(the_last_task_leaving_removes_its_allocation_and_the_ledger_forgets_it, Ledger) {
    const auto p = claim("a1-web.scope", "a1");
    enter("a1-web.scope", "a1", 100);
    enter("a1-db.scope", "a1", 100);
    BOOST_TEST(ledger.leave("a1-web.scope").removal.empty());
    const auto leaving = ledger.leave("a1-db.scope");
    BOOST_REQUIRE(!leaving.removal.empty());
    BOOST_TEST(leaving.removal.front() == p.allocation);
    BOOST_TEST(ledger.removing(p.allocation));
    BOOST_TEST(ledger.holdsAllocationSlice(p.allocation));  // until its stop is done
    ledger.takeDropped();
    const auto removal = ledger.removed(p.allocation);
    BOOST_TEST(removal.reenter.empty());
    BOOST_TEST(removal.unmade.front() == p.allocation);
    BOOST_TEST(!ledger.holdsAllocationSlice(p.allocation));
    BOOST_TEST(ledger.allocationSlices().empty());
    const auto dropped = ledger.takeDropped();
    BOOST_TEST((std::find(dropped.begin(), dropped.end(), p.allocation) != dropped.end()));
    BOOST_TEST(!ledger.knows(p.allocation));
    BOOST_TEST(ledger.takeDropped().empty());
}

BOOST_FIXTURE_TEST_CASE(a_start_during_a_removal_enters_once_it_is_done, Ledger) {
    const auto p = claim("a1-web.scope", "a1");
    enter("a1-web.scope", "a1", 100);
    ledger.leave("a1-web.scope");
    BOOST_TEST(ledger.removing(p.allocation));
    ledger.waitForRemoval("a1-db.scope", p.allocation);
    const auto removal = ledger.removed(p.allocation);
    BOOST_TEST(removal.reenter == std::vector<std::string>{"a1-db.scope"});
    BOOST_TEST(ledger.knows(p.allocation));
    // It is made again, whole: the stop took it.
    const auto e = ledger.enter("a1-db.scope", claim("a1-db.scope", "a1"), cpu(100));
    BOOST_TEST((e.chain.back() == std::pair<std::string, Make>{p.allocation, Make::Carry}));
}

BOOST_FIXTURE_TEST_CASE(a_removal_taken_back_keeps_the_slice, Ledger) {
    const auto p = claim("a1-web.scope", "a1");
    enter("a1-web.scope", "a1", 100);
    ledger.leave("a1-web.scope");
    ledger.removalCancelled(p.allocation);
    BOOST_TEST(!ledger.removing(p.allocation));
    const auto e = ledger.enter("a1-db.scope", claim("a1-db.scope", "a1"), cpu(100));
    BOOST_TEST((e.chain.back() == std::pair<std::string, Make>{p.allocation, Make::Refresh}));
}

BOOST_FIXTURE_TEST_CASE(a_place_never_entered_leaves_no_trace, Ledger) {
    const auto p = claim("a1-web.scope", "a1");
    BOOST_TEST(ledger.knows(p.allocation));
    ledger.leave("a1-web.scope");
    BOOST_TEST(!ledger.knows(p.allocation));
    BOOST_TEST(ledger.takeDropped() == std::vector<std::string>{p.allocation});
}

struct SmallCap : Ledger {
    SmallCap() : Ledger(2) {}
};

BOOST_FIXTURE_TEST_CASE(claims_past_the_cap_go_to_overflow_slices_that_weigh_unscaled, SmallCap) {
    const auto a = claim("a1-t1.scope", "a1");
    claim("a1-t2.scope", "a1");
    const auto o = claim("a1-t3.scope", "a1");  // places claimed count: starts under way hold theirs
    BOOST_TEST(o.parent() != a.allocation);
    BOOST_TEST(o.allocation == a.allocation);
    enter("a1-t1.scope", "a1", 100);
    enter("a1-t2.scope", "a1", 100);
    enter("a1-t3.scope", "a1", 100);
    BOOST_TEST((ledger.weightOf(o.parent()) == scope::unscaledWeight(scope::cpuWeightFromShares(100))));
    BOOST_TEST(ledger.membersOf(a.allocation) == 3u);
    BOOST_TEST(ledger.allocationSlices() == std::set<std::string>{a.allocation});  // overflow slices are not held
}

BOOST_FIXTURE_TEST_CASE(the_shared_pool_rides_on_the_share_slice_start_until_it_exists, Ledger) {
    BOOST_TEST(!ledger.setSharedCpus({2, 3}));
    const auto share = ledger.shareSlice();
    auto has = [](const scope::UnitProperties& p, const std::string& name) {
        return std::any_of(p.begin(), p.end(), [&](const auto& u) { return u.template get<0>() == name; });
    };
    BOOST_TEST(has(ledger.startPropertiesOf(share), "AllowedCPUs"));
    BOOST_TEST(has(ledger.startPropertiesOf(share), "Description"));
    BOOST_TEST(!has(ledger.propertiesOf(share), "CPUWeight"));
    BOOST_TEST(has(ledger.propertiesOf(share), "MemoryAccounting"));
    enter("a1-web.scope", "a1", 100);
    BOOST_TEST(ledger.setSharedCpus({2}));
    const auto p = claim("a1-x.scope", "a1");
    BOOST_TEST(!has(ledger.propertiesOf(p.allocation), "AllowedCPUs"));
    BOOST_TEST(has(ledger.propertiesOf(p.allocation), "CPUWeight"));
}

BOOST_FIXTURE_TEST_CASE(restored_tasks_rescale_to_what_systemd_holds, Ledger) {
    const std::string a1 = "nomad-share-b03-a1.slice", a2 = "nomad-share-b03-a2.slice";
    const std::string bucket = "/nomad.slice/nomad-share.slice/nomad-share-b03.slice";
    ledger.restore("a1-web.scope", a1, "", cpu(100), true, bucket + "/" + a1 + "/a1-web.scope", true);
    ledger.restore("a2-web.scope", a2, "", cpu(300), true, "", true);
    const auto cgroups = ledger.weighedSliceCgroups();
    BOOST_TEST(cgroups.size() == 2u);  // the bucket and a1: a2's cgroup is not known
    BOOST_TEST(cgroups.at(a1) == bucket + "/" + a1);
    // Nothing held: every weight is due.
    const auto fresh = Ledger::asMap(ledger.rescale({}));
    BOOST_TEST(fresh.size() == 3u);
    BOOST_TEST(fresh.at(a2) == 3 * fresh.at(a1));
    // Held at an older band's scale (a2, the heaviest, at 9600: 2^5): kept
    // while it fits.
    SliceLedger again{scope::SliceLayout{"nomad.slice", 64, 100}};
    again.restore("a1-web.scope", a1, "", cpu(100), true, "", true);
    again.restore("a2-web.scope", a2, "", cpu(300), true, "", true);
    const auto kept = Ledger::asMap(again.rescale({{a2, 9600}}));
    BOOST_TEST(kept.at(a2) == 9600u);
    BOOST_TEST(kept.at(a1) == 3200u);
}

BOOST_FIXTURE_TEST_CASE(a_changed_weight_moves_the_sums_and_a_quota_keeps_it_on_the_scope, Ledger) {
    // Two lone tasks' allocations in one bucket, their weights on their slices.
    const std::string a1 = "nomad-share-b03-a1.slice", a2 = "nomad-share-b03-a2.slice";
    ledger.restore("a1-web.scope", a1, "", cpu(100), true, "", false);
    ledger.restore("a2-web.scope", a2, "", cpu(100), true, "", false);
    ledger.rescale({});
    BOOST_TEST((ledger.weightOf(a1) == ledger.weightOf(a2)));
    BOOST_TEST(ledger.reweigh("a1-web.scope", cpu(100)).empty());  // unchanged
    const auto changes = Ledger::asMap(ledger.reweigh("a1-web.scope", cpu(400)));
    BOOST_TEST(changes.count(a2) == 1u);  // the heaviest keeps its band: its sibling moves
    BOOST_TEST(*ledger.weightOf(a1) == 4 * *ledger.weightOf(a2));
    BOOST_TEST(!ledger.weightOnScope("a1-web.scope"));
    spec::Resources quota;
    quota.cpuShares = 400;
    quota.cpuQuotaPercent = 50;
    BOOST_TEST(ledger.reweigh("a1-web.scope", SliceLedger::taskCpu(quota)).empty());  // same shares
    BOOST_TEST(ledger.weightOnScope("a1-web.scope"));
}
