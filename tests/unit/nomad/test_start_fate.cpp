// A start whose answer was lost (start_fate.hpp): its fate from GetTask and
// from the manager's signals, whichever comes first, and what Nomad hears.
#define BOOST_TEST_MODULE start_fate
#include <boost/test/unit_test.hpp>

#include "common/error_names.hpp"
#include "nomad/start_fate.hpp"

using namespace taskscope;
using nomad::StartFate;
using Outcome = StartFate::Outcome;

namespace {

wire::TaskInfo inState(const char* state) {
    wire::TaskInfo t;
    t.state = state;
    return t;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_task_still_starting_settles_nothing) {
    StartFate f("a1", "web");
    f.heardTask(inState("starting"));
    f.heardStateChanged("a1", "web", "starting");
    BOOST_TEST(!f.known());
    const auto v = f.verdict("StartTask: timed out");
    BOOST_REQUIRE(!v);
    BOOST_TEST(v.error().name == common::errors::kNoManager);
}

BOOST_AUTO_TEST_CASE(another_tasks_signals_are_not_this_ones) {
    StartFate f("a1", "web");
    f.heardStarted("a1", "db");
    f.heardStartFailed("a2", "web", "org.taskscope.Error.Overloaded");
    f.heardStateChanged("a1", "webx", "running");
    BOOST_TEST(!f.known());
}

BOOST_AUTO_TEST_CASE(started_or_any_later_state_means_it_ran) {
    for (const char* state : {"running", "stopping", "exited"}) {
        StartFate f("a1", "web");
        f.heardStateChanged("a1", "web", state);
        BOOST_TEST((f.outcome() == Outcome::Ran), state);
        BOOST_TEST(f.verdict("x").ok());
    }
    StartFate f("a1", "web");
    f.heardStarted("a1", "web");
    BOOST_TEST((f.outcome() == Outcome::Ran));
    // A task that ran and exited before GetTask answered.
    StartFate g("a1", "web");
    g.heardTask(inState("exited"));
    BOOST_TEST((g.outcome() == Outcome::Ran));
}

BOOST_AUTO_TEST_CASE(a_failed_start_says_the_managers_error) {
    StartFate f("a1", "web");
    f.heardStartFailed("a1", "web", "org.taskscope.Error.InvalidSpec");
    BOOST_TEST((f.outcome() == Outcome::Failed));
    const auto v = f.verdict("StartTask: timed out");
    BOOST_REQUIRE(!v);
    BOOST_TEST(v.error().name == common::errors::kInvalidSpec);
    BOOST_TEST(v.error().message.find("StartTask: timed out") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_task_gone_before_the_question_failed_and_may_be_retried) {
    StartFate f("a1", "web");
    f.heardTask(common::makeError(common::errors::kNoSuchTask, "no task a1/web"));
    BOOST_TEST((f.outcome() == Outcome::Failed));
    BOOST_TEST(f.verdict("x").error().name == common::errors::kOverloaded);
}

BOOST_AUTO_TEST_CASE(a_bus_too_slow_to_answer_get_task_leaves_it_to_the_signals) {
    StartFate f("a1", "web");
    f.heardTask(common::makeError(common::errors::kNoManager, "GetTask: timed out"));
    BOOST_TEST(!f.known());
    f.heardStartFailed("a1", "web", "org.taskscope.Error.Overloaded");
    BOOST_TEST(f.verdict("x").error().name == common::errors::kOverloaded);
}

BOOST_AUTO_TEST_CASE(a_start_cut_off_is_lost_and_the_first_word_settles_it) {
    StartFate f("a1", "web");
    f.heardStateChanged("a1", "web", "lost");
    BOOST_TEST((f.outcome() == Outcome::CutOff));
    f.heardStarted("a1", "web");  // later words are of the task's life after
    BOOST_TEST((f.outcome() == Outcome::CutOff));
    BOOST_TEST(f.verdict("x").error().name == common::errors::kOverloaded);
}
