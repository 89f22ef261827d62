#define BOOST_TEST_MODULE exit_record
#include <boost/test/unit_test.hpp>

#include "manager/records/exit_record.hpp"

using namespace taskscope::manager;

BOOST_AUTO_TEST_CASE(exit_file_of_a_signalled_task) {
    auto s = parseExitFile("exit_code=137\nsignal=9\noom_killed=1\nfinished_at_us=1700000000000000\nexec_error=0\n"
                           "exec_error_step=\n");
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(s->exitCode == 137);
    BOOST_TEST(s->signal == 9);
    BOOST_TEST(s->oomKilled);
    BOOST_TEST(s->finishedAtUs == 1700000000000000ull);
}

BOOST_AUTO_TEST_CASE(exit_file_without_code_is_an_error) {
    BOOST_TEST(!parseExitFile("signal=9\n").ok());
    BOOST_TEST(!parseExitFile("exit_code=abc\n").ok());
}

