#define BOOST_TEST_MODULE exec_spawn
#include <boost/test/unit_test.hpp>

#include <cstring>

#include "stream/exec/exec_spawn.hpp"

using taskscope::stream::exec::SpawnReports;

namespace {

shim_exec_report frame(int32_t kind, int32_t value, const char* step = "") {
    shim_exec_report r{};
    r.kind = kind;
    r.value = value;
    std::strncpy(r.step, step, sizeof r.step);
    return r;
}

}  // namespace

// signal() sends to -leader: a leader of 1 would be kill(-1, ...), every
// process (fuzz/corpus/exec_frames/review-leader-*).
BOOST_AUTO_TEST_CASE(a_leader_is_a_pid_above_1_and_the_first_one_stays) {
    SpawnReports r;
    for (int32_t bad : {1, 0, -1, -4242, INT32_MIN}) {
        r.take(frame(SHIM_REPORT_LEADER, bad));
        BOOST_TEST(r.leader == 0, bad);
    }
    r.take(frame(SHIM_REPORT_LEADER, 4242));
    r.take(frame(SHIM_REPORT_LEADER, 5151));
    BOOST_TEST(r.leader == 4242);
}

BOOST_AUTO_TEST_CASE(the_first_failure_stays_and_its_step_is_text) {
    SpawnReports r;
    r.take(frame(SHIM_REPORT_FAILED, 2, "execve caf\xc3\xa9"));
    r.take(frame(SHIM_REPORT_FAILED, 13, "chdir"));
    r.take(frame(7, 1, "unknown kind"));
    BOOST_TEST(r.failed);
    BOOST_TEST(r.error == 2);
    BOOST_TEST(r.step == "execve caf??");
}

BOOST_AUTO_TEST_CASE(a_step_without_its_nul_is_cut_at_the_frame) {
    SpawnReports r;
    auto f = frame(SHIM_REPORT_FAILED, 2);
    std::memset(f.step, 'x', sizeof f.step);
    r.take(f);
    BOOST_TEST(r.step == std::string(sizeof f.step - 1, 'x'));  // as the shim writes it: 23 and a NUL
}
