#define BOOST_TEST_MODULE stream_log_dir
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "stream/logs/log_dir.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::stream::logs;
namespace fs = std::filesystem;

BOOST_AUTO_TEST_CASE(removes_the_files_and_the_directory) {
    taskscope::test::TempDir tmp;
    const auto dir = tmp.path + "/a1";
    fs::create_directory(dir);
    for (const char* name : {"web.stdout.0", "web.stderr.0", "web.stdout.1"}) std::ofstream(dir + "/" + name) << "x";
    auto r = removeLogDir(dir);
    BOOST_REQUIRE(r.ok());
    BOOST_REQUIRE(r->has_value());
    BOOST_TEST(**r == 3u);
    BOOST_TEST(!fs::exists(dir));
}

BOOST_AUTO_TEST_CASE(a_missing_directory_is_nothing_to_do) {
    taskscope::test::TempDir tmp;
    auto r = removeLogDir(tmp.path + "/none");
    BOOST_REQUIRE(r.ok());
    BOOST_TEST(!r->has_value());
}

BOOST_AUTO_TEST_CASE(neither_follows_a_symlink_nor_descends) {
    taskscope::test::TempDir tmp;
    fs::create_directory(tmp.path + "/elsewhere");
    std::ofstream(tmp.path + "/elsewhere/keep") << "x";
    fs::create_directory_symlink(tmp.path + "/elsewhere", tmp.path + "/link");
    BOOST_TEST(!removeLogDir(tmp.path + "/link").ok());
    BOOST_TEST(fs::exists(tmp.path + "/elsewhere/keep"));

    fs::create_directories(tmp.path + "/a1/sub");
    std::ofstream(tmp.path + "/a1/sub/keep") << "x";
    BOOST_TEST(!removeLogDir(tmp.path + "/a1").ok());
    BOOST_TEST(fs::exists(tmp.path + "/a1/sub/keep"));
}
