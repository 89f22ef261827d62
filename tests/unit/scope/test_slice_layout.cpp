#define BOOST_TEST_MODULE slice_layout
#include <boost/test/unit_test.hpp>
#include <map>
#include <set>

#include "scope/slice_layout.hpp"
#include "scope/unit_name.hpp"

using namespace taskscope::scope;

namespace {
const SliceLayout kLayout{"nomad.slice", 64, 100};
const char* kUuid = "8b3c1f2e-0a4d-4e6f-9b1a-2c3d4e5f6a7b";
}  // namespace

BOOST_AUTO_TEST_CASE(pool_slices_are_children_of_the_configured_slice) {
    BOOST_TEST(poolSlice(kLayout, Pool::Shared) == "nomad-share.slice");
    BOOST_TEST(poolSlice(kLayout, Pool::Reserved) == "nomad-reserve.slice");
    const SliceLayout nested{"ops-nomad.slice", 16, 100};
    BOOST_TEST(poolSlice(nested, Pool::Shared) == "ops-nomad-share.slice");
}

BOOST_AUTO_TEST_CASE(an_allocation_id_is_one_level_whatever_it_holds) {
    auto s = allocationSlice(kLayout, kUuid, Pool::Shared);
    BOOST_REQUIRE(s);
    const std::string bucket = bucketSlice(kLayout, bucketOf(kUuid, 64));
    BOOST_TEST(*s == bucket.substr(0, bucket.size() - 6) +
                         "-8b3c1f2e\\x2d0a4d\\x2d4e6f\\x2d9b1a\\x2d2c3d4e5f6a7b.slice");
    // Its ancestors, as systemd reads them from the name: exactly the layout's levels.
    const auto up = sliceAncestors(*s);
    BOOST_REQUIRE_EQUAL(up.size(), 3u);
    BOOST_TEST(up[0] == "nomad.slice");
    BOOST_TEST(up[1] == "nomad-share.slice");
    BOOST_TEST(up[2] == bucket);
    BOOST_TEST(isValidSliceName(*s));
}

BOOST_AUTO_TEST_CASE(the_bucket_is_stable_and_spreads) {
    // FNV-1a of the id: the same on every node, every run (a record of it
    // is never needed to find a task's slice again).
    BOOST_TEST(bucketOf(kUuid, 64) == bucketOf(std::string(kUuid), 64));
    BOOST_TEST(bucketOf("", 64) == 1469598103934665603ull % 64);
    std::map<unsigned, int> counts;
    for (int i = 0; i < 6400; ++i) ++counts[bucketOf("alloc-" + std::to_string(i), 64)];
    BOOST_TEST(counts.size() == 64u);
    for (const auto& [bucket, n] : counts) BOOST_TEST((n > 60 && n < 140), "bucket " << bucket << " holds " << n);
    BOOST_TEST(bucketSlice(kLayout, 0) == "nomad-share-b00.slice");
    BOOST_TEST(bucketSlice(kLayout, 255) == "nomad-share-bff.slice");
}

BOOST_AUTO_TEST_CASE(odd_ids_are_escaped_reversibly) {
    for (std::string id : {std::string(kUuid), std::string("a"), std::string(".dot"), std::string("a b/c\\d"),
                           std::string("x\\x2dy"), std::string("ünï"), std::string("--"), std::string("a.b:c_d")}) {
        for (Pool pool : {Pool::Shared, Pool::Reserved}) {
            auto s = allocationSlice(kLayout, id, pool);
            BOOST_REQUIRE(s);
            BOOST_TEST(isValidSliceName(*s), *s);
            auto back = parseAllocationSlice(kLayout, *s);
            BOOST_REQUIRE_MESSAGE(back, *s);
            BOOST_TEST(back->allocId == id);
            BOOST_TEST((back->pool == pool));
            BOOST_TEST(back->overflow == 0u);
            auto o = parseAllocationSlice(kLayout, overflowSlice(*s, 12));
            BOOST_REQUIRE(o);
            BOOST_TEST(o->allocId == id);
            BOOST_TEST(o->overflow == 12u);
        }
    }
}

BOOST_AUTO_TEST_CASE(names_not_of_this_layout_are_not_read_as_allocations) {
    for (const char* name : {"nomad.slice", "nomad-share.slice", "nomad-share-b00.slice", "system.slice",
                             "nomad-share-b00-a\\x2.slice", "nomad-share-bzz-a.slice", "nomad-share-b00-a-x1.slice",
                             "nomad-share-b00-a-o0.slice", "nomad-reserve-A\\x2Db.slice", "other-reserve-a.slice",
                             "a1-web.scope"})
        BOOST_TEST(!parseAllocationSlice(kLayout, name), name);
    // The right form in the wrong bucket was not made by this layout.
    const unsigned right = bucketOf("a", 64);
    const std::string wrong = "nomad-share-" + std::string(right == 0 ? "b01" : "b00") + "-a.slice";
    BOOST_TEST(!parseAllocationSlice(kLayout, wrong));
}

BOOST_AUTO_TEST_CASE(a_task_chain_lists_every_slice_to_make) {
    auto shared = taskSlices(kLayout, "a1", Pool::Shared, 0);
    BOOST_REQUIRE(shared);
    BOOST_REQUIRE_EQUAL(shared->chain.size(), 3u);
    BOOST_TEST(shared->chain[0] == "nomad-share.slice");
    BOOST_TEST(shared->parent() == shared->allocation);
    auto overflow = taskSlices(kLayout, "a1", Pool::Shared, 2);
    BOOST_REQUIRE(overflow);
    BOOST_TEST(overflow->parent() == overflowSlice(shared->allocation, 2));
    BOOST_TEST(overflow->allocation == shared->allocation);
    auto reserved = taskSlices(kLayout, "a1", Pool::Reserved, 0);
    BOOST_REQUIRE(reserved);
    BOOST_REQUIRE_EQUAL(reserved->chain.size(), 2u);
    BOOST_TEST(reserved->parent() == "nomad-reserve-a1.slice");
}

BOOST_AUTO_TEST_CASE(an_id_too_long_for_a_slice_name_is_refused_by_name) {
    auto s = allocationSlice(kLayout, std::string(200, '-'), Pool::Shared);
    BOOST_REQUIRE(!s);
    BOOST_TEST(s.error().name == "InvalidName");
    BOOST_TEST(!allocationSlice(kLayout, "", Pool::Shared));
    // The longest that fits leaves room for any overflow slice.
    std::string id(255, 'x');
    while (!allocationSlice(kLayout, id, Pool::Shared)) id.pop_back();
    BOOST_TEST(overflowSlice(*allocationSlice(kLayout, id, Pool::Shared), 99999).size() <= kUnitNameMax);
}

BOOST_AUTO_TEST_CASE(ancestors_follow_systemds_rule) {
    BOOST_TEST(sliceAncestors("-.slice").empty());
    BOOST_TEST(sliceAncestors("nomad.slice").empty());
    const auto up = sliceAncestors("a-b-c.slice");
    BOOST_REQUIRE_EQUAL(up.size(), 2u);
    BOOST_TEST(up[0] == "a.slice");
    BOOST_TEST(up[1] == "a-b.slice");
}
