#define BOOST_TEST_MODULE fd_budget
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <vector>

#include "manager/node/fd_budget.hpp"

using namespace taskscope::manager;

BOOST_AUTO_TEST_CASE(usage_counts_what_this_process_has_open) {
    auto before = fdUsage();
    BOOST_REQUIRE(before);
    BOOST_TEST(before->limit > 0u);
    std::vector<int> fds;
    for (int i = 0; i < 10; ++i) fds.push_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    auto after = fdUsage();
    BOOST_REQUIRE(after);
    BOOST_TEST(after->open - before->open == 10u);
    for (int fd : fds) ::close(fd);
}

BOOST_AUTO_TEST_CASE(a_start_fits_while_its_peak_and_the_reserve_fit) {
    BOOST_TEST(static_cast<bool>(checkStartBudget({1024 - kFdsPerStart - kFdsReserved, 1024})));
    BOOST_TEST(!checkStartBudget({1024 - kFdsPerStart - kFdsReserved + 1, 1024}));
    BOOST_TEST(!checkStartBudget({0, 10}));  // a limit below the reserve itself
}

BOOST_AUTO_TEST_CASE(the_refusal_is_named_and_says_the_numbers) {
    auto r = checkStartBudget({1017, 1024});
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "ResourceExhausted");
    BOOST_TEST(r.error().message.find("1017 of its 1024") != std::string::npos);
    BOOST_TEST(r.error().message.find("LimitNOFILE=") != std::string::npos);
    BOOST_TEST(r.error().message.find("Too many open files") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(this_process_is_far_from_its_limit_and_then_near_it) {
    BOOST_TEST(static_cast<bool>(checkStartBudget()));
    rlimit saved{};
    ::getrlimit(RLIMIT_NOFILE, &saved);
    auto u = fdUsage();
    BOOST_REQUIRE(u);
    rlimit near = saved;
    near.rlim_cur = u->open + kFdsPerStart + kFdsReserved - 1;
    BOOST_REQUIRE(::setrlimit(RLIMIT_NOFILE, &near) == 0);
    auto r = checkStartBudget();
    ::setrlimit(RLIMIT_NOFILE, &saved);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "ResourceExhausted");
}

// Starts admitted but still waiting for the start worker have opened
// nothing yet: each counts at its peak, so a burst cannot overshoot.
BOOST_AUTO_TEST_CASE(starts_on_their_way_count_at_their_peak) {
    const size_t open = 1024 - 3 * kFdsPerStart - kFdsReserved;
    BOOST_TEST(static_cast<bool>(checkStartBudget({open, 1024}, 2)));
    auto r = checkStartBudget({open, 1024}, 3);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "ResourceExhausted");
    BOOST_TEST(r.error().message.find("3 starts on their way") != std::string::npos, r.error().message);
}
