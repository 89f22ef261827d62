#define BOOST_TEST_MODULE cpu_partitions
#include <boost/test/unit_test.hpp>
#include <random>
#include <vector>

#include "common/cpu_list.hpp"
#include "manager/node/cpu_partitions.hpp"

using taskscope::common::formatCpuList;
using taskscope::common::parseCpuList;
using taskscope::manager::CpuPartitions;

namespace {

std::set<unsigned> cpus(const char* list) { return *parseCpuList(list); }

// One step of a scenario: reserve (count > 0) or release (count == 0) for
// an owner, with the expected cores (or error) and shared pool after it.
struct Step {
    const char* owner;
    unsigned count;
    size_t sharedTasks;
    const char* expectCores;  // nullptr: the step must fail
    const char* expectShared;
};

void run(const char* usable, const char* system, const std::vector<Step>& steps) {
    CpuPartitions p(cpus(usable), cpus(system));
    for (const auto& s : steps) {
        BOOST_TEST_CONTEXT("step " << s.owner << " " << s.count) {
            if (s.count == 0) {
                p.release(s.owner);
            } else {
                auto r = p.reserve(s.owner, s.count, s.sharedTasks);
                if (s.expectCores == nullptr) {
                    BOOST_TEST(!r.ok());
                    if (!r.ok()) BOOST_TEST(r.error().name == "InsufficientCores");
                } else {
                    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
                    BOOST_TEST(formatCpuList(*r) == s.expectCores);
                }
            }
            BOOST_TEST(formatCpuList(p.shared()) == s.expectShared);
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(reserve_and_release_move_the_shared_pool) {
    run("0-3", "", {
                       {"a", 2, 1, "0-1", "2-3"},
                       {"b", 2, 1, nullptr, "2-3"},  // would leave the shared task nothing
                       {"b", 1, 1, "2", "3"},
                       {"a", 0, 0, nullptr, "0-1,3"},
                       {"c", 3, 0, "0-1,3", ""},  // no shared task: everything may go
                       {"d", 1, 0, nullptr, ""},
                       {"c", 0, 0, nullptr, "0-1,3"},
                       {"b", 0, 0, nullptr, "0-3"},
                   });
}

BOOST_AUTO_TEST_CASE(system_cores_are_never_handed_out) {
    run("0-3", "0", {
                        {"a", 3, 0, "1-3", ""},
                        {"a", 0, 0, nullptr, "1-3"},
                        {"b", 4, 0, nullptr, "1-3"},
                    });
}

BOOST_AUTO_TEST_CASE(offline_and_sparse_cpus) {
    // Usable comes from the fingerprint: offline CPUs are simply absent.
    run("0-2,6", "", {
                         {"a", 2, 1, "0-1", "2,6"},
                         {"b", 1, 1, "2", "6"},
                     });
}

BOOST_AUTO_TEST_CASE(exhaustion_error_names_asked_and_free) {
    CpuPartitions p(cpus("0-3"), {});
    BOOST_REQUIRE(p.reserve("a", 3, 0).ok());
    auto r = p.reserve("b", 2, 0);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message == "asked for 2 cores, 1 free (3) of 4 usable");
    auto shared = p.sharedForNewTask();
    BOOST_REQUIRE(shared.ok());
    BOOST_REQUIRE(p.reserve("b", 1, 0).ok());
    BOOST_TEST(!p.sharedForNewTask().ok());
    BOOST_TEST(p.sharedForNewTask().error().message.find("no shared cores left") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(restore_rebuilds_and_refuses_conflicts) {
    CpuPartitions p(cpus("0-7"), {});
    BOOST_REQUIRE(p.restore("a", cpus("4-5")).ok());
    BOOST_TEST(formatCpuList(p.shared()) == "0-3,6-7");
    BOOST_TEST(!p.restore("b", cpus("5")).ok());
    BOOST_TEST(!p.restore("c", cpus("9")).ok());
    auto r = p.reserve("d", 2, 1);
    BOOST_REQUIRE(r.ok());
    BOOST_TEST(formatCpuList(*r) == "0-1");
}

// 1000 random start/stop cycles, with a "restart" (rebuild from the
// surviving reservations) every 100: no core ever leaks or doubles.
BOOST_AUTO_TEST_CASE(no_leak_over_a_thousand_cycles) {
    std::mt19937 rng(42);
    auto p = std::make_unique<CpuPartitions>(cpus("0-15"), std::set<unsigned>{});
    std::map<std::string, std::set<unsigned>> held;
    for (int i = 0; i < 1000; ++i) {
        const auto owner = "t" + std::to_string(rng() % 20);
        if (held.count(owner)) {
            p->release(owner);
            held.erase(owner);
        } else if (auto r = p->reserve(owner, 1 + rng() % 4, 0); r.ok()) {
            held[owner] = *r;
        }
        if (i % 100 == 99) {
            p = std::make_unique<CpuPartitions>(cpus("0-15"), std::set<unsigned>{});
            for (const auto& [o, c] : held) BOOST_REQUIRE(p->restore(o, c).ok());
        }
        std::set<unsigned> all = p->shared();
        size_t total = all.size();
        for (const auto& [o, c] : held) {
            total += c.size();
            all.insert(c.begin(), c.end());
        }
        BOOST_REQUIRE_EQUAL(total, 16u);  // no core in two places
        BOOST_REQUIRE_EQUAL(all.size(), 16u);  // and none lost
    }
    for (const auto& [o, c] : held) p->release(o);
    BOOST_TEST(formatCpuList(p->shared()) == "0-15");
}

// Nomad chooses the cores itself: exactly those, or a named error.
BOOST_AUTO_TEST_CASE(reserve_exact_takes_the_named_cores) {
    CpuPartitions p(cpus("0-5"), cpus("0"));
    auto a = p.reserveExact("a", cpus("2-3"), 1);
    BOOST_REQUIRE(a.ok());
    BOOST_TEST(formatCpuList(*a) == "2-3");
    BOOST_TEST(formatCpuList(p.shared()) == "1,4-5");
    auto taken = p.reserveExact("b", cpus("3-4"), 1);
    BOOST_REQUIRE(!taken.ok());
    BOOST_TEST(taken.error().name == "InsufficientCores");
    BOOST_TEST(!p.reserveExact("c", cpus("0"), 0).ok());  // a system core
    BOOST_TEST(!p.reserveExact("d", cpus("1,4-5"), 2).ok());  // would leave shared tasks no core
    BOOST_TEST(p.reserveExact("e", cpus("1,4-5"), 0).ok());
    p.release("a");
    BOOST_TEST(formatCpuList(p.shared()) == "2-3");
}
