#define BOOST_TEST_MODULE cpu_pool
#include <boost/test/unit_test.hpp>

#include "common/cpu_list.hpp"
#include "manager/node/cpu_pool.hpp"

using taskscope::common::formatCpuList;
using taskscope::manager::CpuPool;
using taskscope::spec::Resources;

namespace {

Resources cores(unsigned n) {
    Resources r;
    r.cores = n;
    return r;
}

}  // namespace

// Every admitted task counts as a shared one until it reserves: a
// reservation always leaves the others a core, but never one for itself.
BOOST_AUTO_TEST_CASE(a_reservation_leaves_a_core_for_the_shared_tasks_but_not_for_itself) {
    CpuPool pool({0, 1, 2, 3}, {}, true);
    pool.join("a");
    pool.join("b");
    auto b = pool.assign("b", cores(2));
    BOOST_REQUIRE(b);
    BOOST_TEST(b->reserved);
    BOOST_TEST(formatCpuList(b->cpus) == "0-1");
    BOOST_TEST(!pool.assign("c", cores(2)));  // would leave "a" nothing
    BOOST_TEST(pool.assign("d", cores(1)).ok());
    BOOST_TEST(pool.sharedText() == "3");
    auto a = pool.assign("a", Resources{});
    BOOST_REQUIRE(a);
    BOOST_TEST(!a->reserved);
    BOOST_TEST(formatCpuList(a->cpus) == "3");
}

// One pass per change of the pool, none while recovering, never an empty one.
BOOST_AUTO_TEST_CASE(the_pool_is_applied_once_per_change) {
    CpuPool pool({0, 1, 2, 3}, {}, true);
    BOOST_TEST(formatCpuList(*pool.poolToApply()) == "0-3");
    BOOST_TEST(!pool.poolToApply());  // unchanged
    pool.join("db");
    BOOST_REQUIRE(pool.assign("db", cores(1)));
    BOOST_TEST(formatCpuList(*pool.poolToApply()) == "1-3");
    pool.setRecovering(true);
    BOOST_TEST(pool.leave("db"));  // the pool grew
    BOOST_TEST(!pool.poolToApply());
    pool.setRecovering(false);
    BOOST_TEST(formatCpuList(*pool.poolToApply()) == "0-3");
    pool.forgetApplied();  // a move failed: asked again
    BOOST_TEST(formatCpuList(*pool.poolToApply()) == "0-3");
    BOOST_TEST(!pool.leave("nobody"));
}

BOOST_AUTO_TEST_CASE(cgroup_v1_assigns_nothing_and_refuses_reservations) {
    CpuPool pool({0, 1}, {}, false);
    auto shared = pool.assign("a", Resources{});
    BOOST_REQUIRE(shared);
    BOOST_TEST(shared->cpus.empty());
    auto reserved = pool.assign("b", cores(1));
    BOOST_REQUIRE(!reserved);
    BOOST_TEST(reserved.error().name == "NotSupported");
    BOOST_TEST(pool.sharedText() == "");
    BOOST_TEST(!pool.poolToApply());
}

// After a restart a task's reservation is its own whatever: it runs there.
BOOST_AUTO_TEST_CASE(a_restored_reservation_is_kept_out_of_the_pool) {
    CpuPool pool({0, 1, 2, 3}, {}, true);
    BOOST_REQUIRE(pool.restore("db", {2, 3}));
    BOOST_TEST(pool.sharedText() == "0-1");
    BOOST_TEST(!pool.restore("other", {3}));  // taken
    BOOST_TEST(pool.leave("db"));
    BOOST_TEST(pool.sharedText() == "0-3");
}
