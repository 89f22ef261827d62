#define BOOST_TEST_MODULE stream_exec_request
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "stream/exec/exec_output.hpp"
#include "stream/exec/exec_request.hpp"
#include "stream/exec/exec_session.hpp"

using namespace taskscope::stream::exec;

namespace {

std::string taskJson(const std::string& state, const std::string& spec) {
    return R"({"alloc_id":"a1","task":"web","unit":"a1-web.scope","state":")" + state +
           R"(","pid":4242,"cgroup":"/nomad.slice/a1-web.scope",)"
           R"("process_spec":"/var/lib/taskscope/process/a1-web.scope","spec":)" +
           spec + "}";
}

// GetTask's JSON as the manager client reads it, then as an exec sees it.
taskscope::common::Result<ExecTarget> targetOf(const std::string& json) {
    auto task = taskscope::wire::parseTaskJson(json);
    if (!task) return task.error();
    return execTarget(*task);
}

}  // namespace

BOOST_AUTO_TEST_CASE(command_must_name_a_program_within_bounds) {
    BOOST_TEST(validateCommand({"/bin/true"}).ok());
    BOOST_TEST(validateCommand({}).error().name == "InvalidArgument");
    BOOST_TEST(validateCommand({""}).error().name == "InvalidArgument");
    BOOST_TEST(validateCommand({"", "x"}).error().name == "InvalidArgument");
    BOOST_TEST(validateCommand(std::vector<std::string>(kMaxCommandArgs + 1, "x")).error().name == "InvalidArgument");
    BOOST_TEST(validateCommand({"echo", std::string(kMaxCommandBytes, 'x')}).error().name == "InvalidArgument");
}

BOOST_AUTO_TEST_CASE(env_names_must_be_names) {
    BOOST_TEST(validateEnv({{"TERM", "xterm"}, {"EMPTY", ""}}).ok());
    BOOST_TEST(validateEnv({{"", "x"}}).error().name == "InvalidArgument");
    BOOST_TEST(validateEnv({{"A=B", "x"}}).error().name == "InvalidArgument");
    std::map<std::string, std::string> many;
    for (size_t i = 0; i <= kMaxEnvVars; ++i) many["V" + std::to_string(i)] = "1";
    BOOST_TEST(validateEnv(many).error().name == "InvalidArgument");
}

BOOST_AUTO_TEST_CASE(window_size_within_1_and_4096) {
    BOOST_TEST(validateWindow(24, 80).ok());
    BOOST_TEST(validateWindow(1, 1).ok());
    BOOST_TEST(validateWindow(4096, 4096).ok());
    BOOST_TEST(validateWindow(0, 80).error().name == "InvalidArgument");
    BOOST_TEST(validateWindow(24, 0).error().name == "InvalidArgument");
    BOOST_TEST(validateWindow(4097, 80).error().name == "InvalidArgument");
    BOOST_TEST(validateWindow(24, 65535).error().name == "InvalidArgument");
}

BOOST_AUTO_TEST_CASE(once_deadline_and_cap_bounds) {
    BOOST_TEST(validateOnce(1, 0).ok());
    BOOST_TEST(validateOnce(kMaxOnceTimeoutMs, kMaxOnceOutput).ok());
    BOOST_TEST(validateOnce(0, 100).error().name == "InvalidArgument");
    BOOST_TEST(validateOnce(kMaxOnceTimeoutMs + 1, 100).error().name == "InvalidArgument");
    BOOST_TEST(validateOnce(1000, kMaxOnceOutput + 1).error().name == "InvalidArgument");
}

BOOST_AUTO_TEST_CASE(target_from_a_running_task_with_its_spec) {
    auto t = targetOf(taskJson(
        "running", R"({"command":"/bin/sleep","user":"nobody","group":"nogroup","cwd":"/srv","env":{"A":"1"}})"));
    BOOST_REQUIRE(t.ok());
    BOOST_TEST(t->pid == 4242);
    BOOST_TEST(t->unit == "a1-web.scope");
    BOOST_TEST(t->cgroup == "/nomad.slice/a1-web.scope");
    // Identity and cwd are the process spec's, resolved by the manager.
    BOOST_TEST(t->processSpec == "/var/lib/taskscope/process/a1-web.scope");
    BOOST_TEST(t->env.at("A") == "1");
}

BOOST_AUTO_TEST_CASE(target_defaults_as_the_manager_does) {
    auto t = targetOf(taskJson("running", R"({"command":"/bin/sleep"})"));
    BOOST_REQUIRE(t.ok());
    BOOST_TEST(t->env.empty());
}

BOOST_AUTO_TEST_CASE(target_spec_may_come_as_a_string) {
    auto t = targetOf(taskJson("running", R"("{\"command\":\"/bin/sleep\",\"env\":{\"A\":\"2\"}}")"));
    BOOST_REQUIRE(t.ok());
    BOOST_TEST(t->env.at("A") == "2");
}

BOOST_AUTO_TEST_CASE(target_not_running_is_named) {
    for (const auto* state : {"exited", "lost", "starting", "stopping"}) {
        auto t = targetOf(taskJson(state, R"({"command":"/bin/true"})"));
        BOOST_REQUIRE(!t.ok());
        BOOST_TEST(t.error().name == "NotRunning");
        BOOST_TEST(t.error().message.find(state) != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(target_from_garbage_is_internal) {
    BOOST_TEST(targetOf("not json").error().name == "Internal");
    BOOST_TEST(targetOf(R"({"state":"running"})").error().name == "Internal");
    BOOST_TEST(targetOf(taskJson("running", "17")).error().name == "Internal");
}

BOOST_AUTO_TEST_CASE(cgroup_membership_on_v2_and_v1) {
    const std::string cg = "/nomad.slice/a1-web.scope";
    BOOST_TEST(inCgroup("0::/nomad.slice/a1-web.scope\n", cg));
    BOOST_TEST(inCgroup("0::/nomad.slice/a1-web.scope/sub\n", cg));
    BOOST_TEST(inCgroup("12:pids:/nomad.slice/a1-web.scope\n1:name=systemd:/nomad.slice/a1-web.scope\n0::/\n", cg));
    BOOST_TEST(!inCgroup("0::/nomad.slice/a1-web.scope2\n", cg));
    BOOST_TEST(!inCgroup("0::/nomad.slice\n", cg));
    BOOST_TEST(!inCgroup("1:name=systemd:/system.slice/taskscope-streamer.service\n0::/\n", cg));
    BOOST_TEST(!inCgroup("", cg));
}

BOOST_AUTO_TEST_CASE(environment_is_the_tasks_with_path_and_the_callers_on_top) {
    const auto env = execEnvironment({{"A", "task"}, {"B", "task"}}, {{"B", "caller"}, {"TERM", "xterm"}});
    BOOST_TEST(env == (std::vector<std::string>{"A=task", "B=caller",
                                                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                                "TERM=xterm"}),
               boost::test_tools::per_element());
    BOOST_TEST(pathOf(env) == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    const auto own = execEnvironment({{"PATH", "/opt/bin"}}, {});
    BOOST_TEST(pathOf(own) == "/opt/bin");
    BOOST_TEST(pathOf(execEnvironment({}, {{"PATH", "/x"}})) == "/x");
}

BOOST_AUTO_TEST_CASE(target_without_a_process_spec_is_internal) {
    // A task whose manager saved no process spec cannot be entered the
    // way it was started: refused, not guessed from the host's databases.
    const std::string j = R"({"unit":"a1-web.scope","state":"running","pid":4242,)"
                          R"("cgroup":"/nomad.slice/a1-web.scope","spec":{"command":"/bin/true"}})";
    auto t = targetOf(j);
    BOOST_REQUIRE(!t.ok());
    BOOST_TEST(t.error().name == "Internal");
    BOOST_TEST(t.error().message.find("process spec") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(output_capture_keeps_the_first_bytes) {
    OutputCapture c(5);
    c.append("abc", 3);
    BOOST_TEST(!c.truncated());
    c.append("defgh", 5);
    BOOST_TEST(c.truncated());
    BOOST_TEST(std::string(c.bytes().begin(), c.bytes().end()) == "abcde");
    BOOST_TEST(c.total() == 8u);
    OutputCapture exact(3);
    exact.append("abc", 3);
    BOOST_TEST(!exact.truncated());
    OutputCapture none(0);
    none.append("x", 1);
    BOOST_TEST(none.bytes().empty());
    BOOST_TEST(none.truncated());
}

BOOST_AUTO_TEST_CASE(results_are_kept_bounded_in_number) {
    ExecResults r(3, std::chrono::minutes(10));
    const auto now = ExecResults::Clock::now();
    for (uint64_t id = 1; id <= 5; ++id) r.add(id, {static_cast<int>(id), 0}, now);
    BOOST_TEST(r.size() == 3u);
    BOOST_TEST(!r.find(1, now).has_value());
    BOOST_TEST(!r.find(2, now).has_value());
    BOOST_TEST(r.find(5, now)->exitCode == 5);
}

BOOST_AUTO_TEST_CASE(results_are_kept_bounded_in_time) {
    ExecResults r(100, std::chrono::seconds(60));
    const auto t0 = ExecResults::Clock::now();
    r.add(1, {7, 0}, t0);
    r.add(2, {8, 0}, t0 + std::chrono::seconds(30));
    BOOST_TEST(r.find(1, t0 + std::chrono::seconds(59))->exitCode == 7);
    BOOST_TEST(!r.find(1, t0 + std::chrono::seconds(60)).has_value());
    BOOST_TEST(r.find(2, t0 + std::chrono::seconds(60))->exitCode == 8);
    BOOST_TEST(!r.find(2, t0 + std::chrono::seconds(91)).has_value());
    BOOST_TEST(r.size() == 0u);
}

BOOST_AUTO_TEST_CASE(result_from_wait_status) {
    BOOST_TEST(resultFromStatus(W_EXITCODE(7, 0)).exitCode == 7);
    BOOST_TEST(resultFromStatus(W_EXITCODE(7, 0)).signal == 0);
    BOOST_TEST(resultFromStatus(W_EXITCODE(0, 9)).exitCode == 137);
    BOOST_TEST(resultFromStatus(W_EXITCODE(0, 9)).signal == 9);
}
