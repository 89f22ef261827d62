#define BOOST_TEST_MODULE stream_exec_records
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include "common/files.hpp"
#include "stream/exec/exec_records.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::stream::exec;

BOOST_AUTO_TEST_CASE(records_round_trip_and_go) {
    taskscope::test::TempDir tmp;
    SessionRecords records(tmp.path + "/exec");
    BOOST_REQUIRE(records.open().ok());
    struct stat st {};
    BOOST_REQUIRE(::stat((tmp.path + "/exec").c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 07777) == 0700u);
    BOOST_REQUIRE(records.save({12, "a1", "web", ":1.7", true, 100, 101}).ok());
    BOOST_REQUIRE(records.save({13, "a2", "db", ":1.8", false, 200, 201}).ok());
    BOOST_REQUIRE(::stat((tmp.path + "/exec/12.json").c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 0777) == 0600u);
    auto all = records.load();
    BOOST_REQUIRE(all.size() == 2u);
    const auto& r = all[0].session == 12 ? all[0] : all[1];
    BOOST_TEST(r.allocId == "a1");
    BOOST_TEST(r.task == "web");
    BOOST_TEST(r.owner == ":1.7");
    BOOST_TEST(r.tty);
    BOOST_TEST(r.keeper == 100);
    BOOST_TEST(r.leader == 101);
    records.remove(12);
    BOOST_TEST(records.load().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_broken_record_is_dropped_not_trusted) {
    taskscope::test::TempDir tmp;
    SessionRecords records(tmp.path);
    BOOST_REQUIRE(records.open().ok());
    BOOST_REQUIRE(taskscope::common::writeFileAtomic(tmp.path + "/5.json", "{\"session\": 5").ok());
    BOOST_REQUIRE(taskscope::common::writeFileAtomic(
                      tmp.path + "/6.json",
                      R"({"session":7,"alloc_id":"a","task":"t","owner":":1.1","tty":false,"keeper":1,"leader":2})")
                      .ok());
    BOOST_TEST(records.load().empty());
    BOOST_TEST(!taskscope::common::readFile(tmp.path + "/5.json").ok());
    BOOST_TEST(!taskscope::common::readFile(tmp.path + "/6.json").ok());
}

BOOST_AUTO_TEST_CASE(session_numbers_continue_after_the_reserved_block) {
    taskscope::test::TempDir tmp;
    SessionRecords records(tmp.path);
    BOOST_REQUIRE(records.open().ok());
    BOOST_TEST(records.firstUnused() == 1u);
    BOOST_REQUIRE(records.reserveBelow(2048).ok());
    BOOST_TEST(SessionRecords(tmp.path).firstUnused() == 2048u);
    SessionRecords none("");
    BOOST_TEST(none.open().ok());
    BOOST_TEST(none.save({1, "a", "t", ":1.1", false, 1, 1}).ok());
    BOOST_TEST(none.load().empty());
}
