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


// Every byte of a value is the number: a record cut by a power cut mid-line,
// or one a task's root could reach, never passes for another exit.
BOOST_AUTO_TEST_CASE(exit_file_values_are_whole_numbers_in_range) {
    for (const char* bad : {"exit_code=1x\n", "exit_code=\n", "exit_code= 1\n", "exit_code=99999999999\n",
                            "exit_code=0\nfinished_at_us=-1\n", "exit_code=0\nsignal=-9\n", "exit_code=0\nsignal=200\n",
                            "exit_code=0\noom_killed=yes\n", "exit_code=0\nexec_error=-2\n"}) {
        const auto s = parseExitFile(bad);
        BOOST_TEST(!s.ok(), bad);
        if (!s.ok()) BOOST_TEST(s.error().message.find("bad value for") != std::string::npos);
    }
    const auto s = parseExitFile("exit_code=-1\nfinished_at_us=18446744073709551615\n");
    BOOST_REQUIRE(s.ok());
    BOOST_TEST(s->exitCode == -1);
    BOOST_TEST(s->finishedAtUs == 18446744073709551615ull);
}
