#define BOOST_TEST_MODULE task_record
#include <boost/test/unit_test.hpp>

#include "task/task_record.hpp"

using namespace taskscope::task;

BOOST_AUTO_TEST_CASE(record_round_trips) {
    TaskRecord r;
    r.allocId = "a1";
    r.name = "web";
    r.unit = "a1-web.scope";
    r.specText = R"({"command":"/bin/true"})";
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
    r.specText = "{}";  // read leniently: a record is never refused for its spec's checks
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

// The record holds the typed spec and the caller's text of it.
BOOST_AUTO_TEST_CASE(a_record_reads_its_spec_into_the_struct) {
    TaskRecord r;
    r.allocId = "a1";
    r.name = "web";
    r.unit = "a1-web.scope";
    r.specText = R"({"command":"/bin/sleep","kill_signal":"INT","future":1})";
    auto back = recordFromJson(toJson(r));
    BOOST_REQUIRE(back.ok());
    BOOST_TEST(back->spec.command == "/bin/sleep");
    BOOST_TEST(back->spec.killSignal == 2);
    BOOST_TEST(back->specText == r.specText);
    auto j = toJson(r);
    j["spec"] = R"({"command":"/bin/sleep","env":{"A":1}})";
    BOOST_TEST(!recordFromJson(j).ok());
}

namespace {
TaskRecord runningWeb() {
    TaskRecord r;
    r.allocId = "a1";
    r.name = "web";
    r.unit = "a1-web.scope";
    r.specText = "{}";
    r.state = TaskState::Running;
    return r;
}
}  // namespace

BOOST_AUTO_TEST_CASE(the_slice_round_trips_and_older_records_are_flat) {
    TaskRecord r = runningWeb();
    r.slice = "nomad-share-b1f-a1.slice";
    auto j = toJson(r);
    auto back = recordFromJson(j);
    BOOST_REQUIRE(back.ok());
    BOOST_TEST(back->slice == r.slice);
    // An older manager's record (and a flat task's) has none: flat.
    j.erase("slice");
    back = recordFromJson(j);
    BOOST_REQUIRE(back.ok());
    BOOST_TEST(back->slice.empty());
    r.slice.clear();
    BOOST_TEST(!toJson(r).contains("slice"));
}

BOOST_AUTO_TEST_CASE(an_overflow_task_names_its_allocation_slice_too) {
    TaskRecord r = runningWeb();
    r.slice = "nomad-share-b1f-a1-o2.slice";
    r.allocSlice = "nomad-share-b1f-a1.slice";
    auto j = toJson(r);
    auto back = recordFromJson(j);
    BOOST_REQUIRE(back.ok());
    BOOST_TEST(back->slice == r.slice);
    BOOST_TEST(back->allocSlice == r.allocSlice);
    // A record from before overflow slices: its slice is its allocation's.
    j.erase("alloc_slice");
    j["slice"] = "nomad-share-b1f-a1.slice";
    back = recordFromJson(j);
    BOOST_REQUIRE(back.ok());
    BOOST_TEST(back->allocSlice == "nomad-share-b1f-a1.slice");
}

// A number read back must be a whole number that fits its field: get<T>()
// narrowed silently, and a float past the range was undefined behaviour
// (fuzz/task_record, issue 58).
BOOST_AUTO_TEST_CASE(a_number_that_does_not_fit_is_refused_naming_the_field) {
    TaskRecord r;
    r.allocId = "a1";
    r.name = "web";
    r.unit = "a1-web.scope";
    r.specText = R"({"command":"/bin/true"})";
    r.cgroup = "/nomad.slice/a1-web.scope";
    const auto good = toJson(r);
    for (const auto& [key, value] :
         std::initializer_list<std::pair<const char*, nlohmann::json>>{{"started_at_us", 1.7e82},
                                                                       {"started_at_us", -1},
                                                                       {"pid", int64_t{1} << 40},
                                                                       {"exit_code", 2.5},
                                                                       {"exec_error", "2"},
                                                                       {"kill_deadline_us", -5}}) {
        auto j = good;
        j[key] = value;
        auto back = recordFromJson(j);
        BOOST_REQUIRE_MESSAGE(!back.ok(), key);
        BOOST_TEST(back.error().name == "Internal");
        BOOST_TEST(back.error().message.find(key) != std::string::npos, back.error().message);
    }
    BOOST_TEST(recordFromJson(good).ok());
}
