#define BOOST_TEST_MODULE stream_rotator
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "stream/logs/rotator.hpp"
#include "stream/logs/test_logs.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::stream::logs;
namespace fs = std::filesystem;

namespace {

using taskscope::test::TempDir;

// Writes through the rotator as the collector does: never past room().
void write(Rotator& r, const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
        const size_t n = std::min<size_t>(data.size() - done, r.room());
        BOOST_REQUIRE(n > 0);
        BOOST_REQUIRE(::pwrite(r.fd(), data.data() + done, n, static_cast<off_t>(r.offset())) ==
                      static_cast<ssize_t>(n));
        done += n;
        BOOST_REQUIRE(r.advance(n).ok());
    }
}


}  // namespace

BOOST_AUTO_TEST_CASE(starts_at_zero) {
    TempDir d;
    Rotator r(d.path, "web.stdout", 3, 10);
    BOOST_REQUIRE(r.open().ok());
    BOOST_TEST(r.index() == 0u);
    BOOST_TEST(r.offset() == 0u);
    BOOST_TEST(r.room() == 10u);
    BOOST_TEST(fs::exists(d.path + "/web.stdout.0"));
}

BOOST_AUTO_TEST_CASE(rotates_at_the_limit_and_keeps_max_files) {
    TempDir d;
    Rotator r(d.path, "web.stdout", 3, 10);
    BOOST_REQUIRE(r.open().ok());
    std::string all;
    for (int i = 0; i < 47; ++i) all += static_cast<char>('a' + i % 26);
    write(r, all);
    // 47 bytes in files of 10: indexes 0..4, the last holding 7; only 2..4 kept.
    const auto files = listLogFiles(d.path, "web.stdout");
    BOOST_REQUIRE(files.size() == 3u);
    BOOST_TEST(files[0].index == 2u);
    BOOST_TEST(files[1].index == 3u);
    BOOST_TEST(files[2].index == 4u);
    BOOST_TEST(files[0].size == 10u);
    BOOST_TEST(files[2].size == 7u);
    BOOST_TEST(readAll(d.path, "web.stdout") == all.substr(20));
    for (const auto& f : files) BOOST_TEST(f.size <= 10u);
}

BOOST_AUTO_TEST_CASE(exact_fill_starts_the_next_file) {
    TempDir d;
    Rotator r(d.path, "web.stdout", 5, 10);
    BOOST_REQUIRE(r.open().ok());
    write(r, std::string(10, 'x'));
    BOOST_TEST(r.index() == 1u);
    BOOST_TEST(r.offset() == 0u);
    BOOST_TEST(fs::exists(d.path + "/web.stdout.1"));
}

BOOST_AUTO_TEST_CASE(restart_continues_the_highest_file) {
    TempDir d;
    {
        Rotator r(d.path, "web.stdout", 5, 10);
        BOOST_REQUIRE(r.open().ok());
        write(r, std::string(24, 'x'));
    }
    Rotator again(d.path, "web.stdout", 5, 10);
    BOOST_REQUIRE(again.open().ok());
    BOOST_TEST(again.index() == 2u);
    BOOST_TEST(again.offset() == 4u);
    write(again, "yyyyyyy");
    BOOST_TEST(readAll(d.path, "web.stdout") == std::string(24, 'x') + "yyyyyyy");
}

BOOST_AUTO_TEST_CASE(restart_after_a_crash_at_a_full_file) {
    TempDir d;
    { std::ofstream(d.path + "/web.stdout.7") << std::string(10, 'x'); }
    Rotator r(d.path, "web.stdout", 5, 10);
    BOOST_REQUIRE(r.open().ok());
    BOOST_TEST(r.index() == 8u);
    BOOST_TEST(r.room() == 10u);
}

BOOST_AUTO_TEST_CASE(restart_prunes_to_max_files) {
    TempDir d;
    for (int i = 0; i < 6; ++i) std::ofstream(d.path + "/web.stdout." + std::to_string(i)) << "z";
    Rotator r(d.path, "web.stdout", 2, 10);
    BOOST_REQUIRE(r.open().ok());
    const auto files = listLogFiles(d.path, "web.stdout");
    BOOST_REQUIRE(files.size() == 2u);
    BOOST_TEST(files[0].index == 4u);
    BOOST_TEST(files[1].index == 5u);
}

BOOST_AUTO_TEST_CASE(ignores_other_names) {
    TempDir d;
    for (const char* n :
         {"web.stdout.1", "web.stdout.01", "web.stdout.2.tmp", "web.stderr.5", "web.stdout.", "webx.stdout.9"})
        std::ofstream(d.path + "/" + n) << "q";
    const auto files = listLogFiles(d.path, "web.stdout");
    BOOST_REQUIRE(files.size() == 1u);
    BOOST_TEST(files[0].index == 1u);
}

BOOST_AUTO_TEST_CASE(missing_directory_fails_cleanly) {
    Rotator r("/nonexistent/taskscope", "web.stdout", 2, 10);
    auto res = r.open();
    BOOST_TEST(!res.ok());
    BOOST_TEST(r.fd() < 0);
}
