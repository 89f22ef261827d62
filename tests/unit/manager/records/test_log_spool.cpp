#define BOOST_TEST_MODULE log_spool
#include <boost/test/unit_test.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fstream>

#include "common/error_names.hpp"
#include "common/unique_fd.hpp"
#include "manager/records/log_spool.hpp"
#include "support/temp_dir.hpp"
#include "wire/spool.hpp"

// The spool's description as the manager writes it for a task whose
// output is copied to the journal (issue 59): the flag at the start, the
// task's pid once known, and after a restart only where it is missing.

using namespace taskscope;

namespace {

struct Spool {
    test::TempDir dir;
    manager::LogSpool spool{dir.path + "/spool"};
    Spool() { BOOST_REQUIRE(spool.prepareDir()); }
    wire::SpoolDescription read(const std::string& unit) const {
        auto d = wire::parseSpoolDescription(test::slurp(spool.description(unit)));
        BOOST_REQUIRE(d);
        return *d;
    }
    void add(const std::string& unit, bool journal) const {
        manager::LogSettings s{dir.path + "/logs", 3, 5, journal, std::nullopt};
        BOOST_REQUIRE(spool.add(unit, "a1", "web", s));
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(the_description_says_journal_and_gets_the_pid, Spool) {
    add("a1-web.scope", true);
    auto d = read("a1-web.scope");
    BOOST_TEST(d.journal);
    BOOST_TEST(d.taskPid == 0);
    BOOST_TEST(d.maxFiles == 3);
    spool.setTaskPid("a1-web.scope", 4242);
    d = read("a1-web.scope");
    BOOST_TEST(d.taskPid == 4242);
    BOOST_TEST(d.journal);
    BOOST_TEST(d.maxFileSizeMb == 5);  // the rest as it was
    // A task whose description the streamer already removed: nothing made.
    spool.setTaskPid("a1-gone.scope", 7);
    BOOST_TEST(::access(spool.description("a1-gone.scope").c_str(), F_OK) != 0);
}

BOOST_FIXTURE_TEST_CASE(the_journal_is_off_by_default, Spool) {
    add("a1-web.scope", false);
    BOOST_TEST(!read("a1-web.scope").journal);
}

// Recovery: only a journal task's description that lacks the pid.
BOOST_FIXTURE_TEST_CASE(fill_writes_only_a_missing_journal_pid, Spool) {
    add("a1-journal.scope", true);
    add("a1-plain.scope", false);
    add("a1-known.scope", true);
    spool.setTaskPid("a1-known.scope", 11);
    for (auto unit : {"a1-journal.scope", "a1-plain.scope", "a1-known.scope"}) spool.fillTaskPid(unit, 99);
    BOOST_TEST(read("a1-journal.scope").taskPid == 99);
    BOOST_TEST(read("a1-plain.scope").taskPid == 0);
    BOOST_TEST(read("a1-known.scope").taskPid == 11);
    spool.fillTaskPid("a1-none.scope", 99);
    BOOST_TEST(::access(spool.description("a1-none.scope").c_str(), F_OK) != 0);
}

BOOST_AUTO_TEST_CASE(journald_socket_is_looked_for) {
    test::TempDir dir;
    const auto path = dir.path + "/stdout";
    auto missing = manager::journalSocketReady(path);
    BOOST_REQUIRE(!missing);
    BOOST_TEST(missing.error().name == common::errors::kJournalUnavailable);
    BOOST_TEST(missing.error().message.find(path) != std::string::npos, missing.error().message);
    BOOST_TEST(missing.error().message.find("start systemd-journald, or turn log_journal off") != std::string::npos);
    std::ofstream(path) << "";
    auto file = manager::journalSocketReady(path);
    BOOST_REQUIRE(!file);
    BOOST_TEST(file.error().message.find("not a socket") != std::string::npos, file.error().message);
    ::unlink(path.c_str());
    common::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, sizeof a.sun_path - 1);
    BOOST_REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    BOOST_TEST(manager::journalSocketReady(path).ok());
}
