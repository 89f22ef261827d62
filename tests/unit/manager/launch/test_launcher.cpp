#define BOOST_TEST_MODULE launcher
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "common/unique_fd.hpp"
#include "manager/launch/launcher.hpp"

using taskscope::common::UniqueFd;
using taskscope::manager::acceptPid;
using taskscope::manager::acceptRelease;
using taskscope::manager::Launch;
using taskscope::manager::readReportLine;

namespace {

struct Pipe {
    UniqueFd r, w;
    Pipe() {
        int p[2];
        BOOST_REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
        r.reset(p[0]);
        w.reset(p[1]);
    }
    void put(const std::string& s) { BOOST_REQUIRE(::write(w.get(), s.data(), s.size()) == ssize_t(s.size())); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(two_lines_in_one_read_are_two_lines) {
    Pipe p;
    std::string pending;
    p.put("pid 42\nstarted\n");
    BOOST_TEST(*readReportLine(p.r.get(), pending) == "pid 42");
    BOOST_TEST(*readReportLine(p.r.get(), pending) == "started");
    BOOST_TEST(pending.empty());
}

BOOST_AUTO_TEST_CASE(a_line_split_over_writes_is_joined) {
    Pipe p;
    std::string pending;
    p.put("execfailed 2 ");
    p.put("exec\n");
    BOOST_TEST(*readReportLine(p.r.get(), pending) == "execfailed 2 exec");
}

BOOST_AUTO_TEST_CASE(the_writer_closing_mid_line_is_an_error_that_quotes_it) {
    Pipe p;
    std::string pending;
    p.put("pid 4");
    p.w.reset();
    auto r = readReportLine(p.r.get(), pending);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().message.find("'pid 4'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_endless_line_is_refused) {
    Pipe p;
    std::string pending;
    p.put(std::string(2000, 'x'));
    auto r = readReportLine(p.r.get(), pending);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "Internal");
}

// A block read can bring a line's end past the bound with the bytes that
// cross it (fuzz/corpus/shim_report/review-line-past-the-bound).
BOOST_AUTO_TEST_CASE(a_line_past_the_bound_is_refused_when_its_end_comes_in_the_same_read) {
    Pipe p;
    std::string pending;
    p.put(std::string(600, 'x') + "\n");
    auto r = readReportLine(p.r.get(), pending);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().message.find("longer than 512 bytes") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_pid_is_one_number_from_2_up_and_a_refused_one_changes_nothing) {
    Launch l;
    BOOST_TEST(acceptPid(l, "pid 42").ok());
    BOOST_TEST(l.taskPid == 42);
    for (const char* bad : {"pid -5", "pid 1", "pid 0", "pid 99999999999", "pid 42 7", "pid 042", "pid", "pid  42"}) {
        BOOST_TEST(!acceptPid(l, bad).ok(), bad);
        BOOST_TEST(l.taskPid == 42, bad);
    }
    auto failed = acceptPid(l, "error 22 args");
    BOOST_REQUIRE(!failed);
    BOOST_TEST(failed.error().message == "shim could not fork the task: 'error 22 args'");
}

BOOST_AUTO_TEST_CASE(a_release_report_is_three_words_and_its_bytes_are_quoted_as_text) {
    BOOST_TEST(acceptRelease("started").ok());
    auto e = acceptRelease("execfailed 2 execve");
    BOOST_REQUIRE(!e);
    BOOST_TEST(e.error().name == "ExecFailed");
    BOOST_TEST(e.error().message == "could not run the command (execve): No such file or directory");
    // The shim writes "execfailed N " when a step failed before naming itself.
    auto unnamed = acceptRelease("execfailed 2 ");
    BOOST_REQUIRE(!unnamed);
    BOOST_TEST(unnamed.error().name == "ExecFailed");
    auto odd = acceptRelease("execfailed 2 \xff\x01");
    BOOST_REQUIRE(!odd);
    BOOST_TEST(odd.error().message == "could not run the command (\\xff\\x01): No such file or directory");
    for (const char* bad :
         {"execfailed x execve", "execfailed 2", "execfailed 0 execve", "execfailed 2 a b", "startedx"}) {
        auto r = acceptRelease(bad);
        BOOST_REQUIRE(!r);
        BOOST_TEST(r.error().name == "Internal", bad);
    }
}

// The saved process spec ends each word with a NUL: a NUL inside one (a
// cwd of "/x\0--uid\00") would be options the manager never wrote for
// every exec into the task. Refused before anything is spawned.
BOOST_AUTO_TEST_CASE(a_process_word_with_a_nul_is_refused_before_the_spawn) {
    taskscope::spec::TaskSpec spec;
    spec.command = "true";
    spec.path = "/bin/true";
    spec.cwd = std::string("/tmp\000--uid\0000", 12);  // "\000" then "0": a NUL, a zero
    auto r = taskscope::manager::spawnShim("/nonexistent/taskscope-shim", spec, {});
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "InvalidSpec");
    BOOST_TEST(r.error().message == "the shim's option --cwd has a word with a NUL byte");
}
