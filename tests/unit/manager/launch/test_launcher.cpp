#define BOOST_TEST_MODULE launcher
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "common/unique_fd.hpp"
#include "manager/launch/launcher.hpp"

using taskscope::common::UniqueFd;
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
