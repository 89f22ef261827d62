#define BOOST_TEST_MODULE task_record
#include <boost/test/unit_test.hpp>

#include "manager/task_record.hpp"

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

BOOST_AUTO_TEST_CASE(record_round_trips) {
    TaskRecord r;
    r.allocId = "a1";
    r.name = "web";
    r.unit = "a1-web.scope";
    r.specJson = R"({"command":"/bin/true"})";
    r.state = TaskState::Exited;
    r.pid = 0;
    r.shimPid = 42;
    r.cgroup = "/nomad.slice/a1-web.scope";
    r.startedAtUs = 5;
    r.exit.exitCode = 3;
    r.exitReported = true;
    auto back = recordFromJson(toJson(r));
    BOOST_REQUIRE(back.ok());
    BOOST_TEST(back->unit == r.unit);
    BOOST_TEST((back->state == TaskState::Exited));
    BOOST_TEST(back->exit.exitCode == 3);
    BOOST_TEST(back->shimPid == 42);
    BOOST_TEST(back->exitReported);
}

BOOST_AUTO_TEST_CASE(a_stop_deadline_round_trips_and_older_records_have_none) {
    TaskRecord r;
    r.allocId = "a1";
    r.name = "web";
    r.unit = "a1-web.scope";
    r.specJson = "{}";
    r.state = TaskState::Stopping;
    r.killDeadlineUs = 123456789;
    auto j = toJson(r);
    auto back = recordFromJson(j);
    BOOST_REQUIRE(back.ok());
    BOOST_TEST((back->state == TaskState::Stopping));
    BOOST_TEST(back->killDeadlineUs == 123456789u);
    // A record written before the deadline was kept has no such field.
    j.erase("kill_deadline_us");
    back = recordFromJson(j);
    BOOST_REQUIRE(back.ok());
    BOOST_TEST(back->killDeadlineUs == 0u);
}

BOOST_AUTO_TEST_CASE(times_are_rfc3339) {
    BOOST_TEST(formatTime(0) == "");
    BOOST_TEST(formatTime(1700000000123456ull) == "2023-11-14T22:13:20.123456Z");
}
