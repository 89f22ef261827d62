#define BOOST_TEST_MODULE files
#include <fcntl.h>
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <fstream>

#include "common/error_names.hpp"
#include "common/files.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::common;

namespace {

unsigned modeOf(const std::string& path) {
    struct stat st {};
    BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

}  // namespace

BOOST_AUTO_TEST_CASE(atomic_writes_are_private_by_default) {
    taskscope::test::TempDir d;
    const auto f = d.path + "/record.json";
    BOOST_REQUIRE(writeFileAtomic(f, "{}\n").ok());
    BOOST_TEST(modeOf(f) == 0600u);
    // A tmp file a crash left behind, readable by all, does not pass its mode on.
    std::ofstream(f + ".tmp") << "old";
    ::chmod((f + ".tmp").c_str(), 0644);
    BOOST_REQUIRE(writeFileAtomic(f, "{\"a\":1}\n").ok());
    BOOST_TEST(modeOf(f) == 0600u);
    BOOST_TEST(taskscope::test::slurp(f) == "{\"a\":1}\n");
}

BOOST_AUTO_TEST_CASE(private_dirs_and_files_are_fixed_when_they_exist) {
    taskscope::test::TempDir d;
    const auto dir = d.path + "/state/tasks";
    BOOST_REQUIRE(makeDirs(dir, 0755).ok());
    std::ofstream(dir + "/old.json") << "{}";
    ::chmod((dir + "/old.json").c_str(), 0644);
    BOOST_REQUIRE(makePrivateDir(dir).ok());
    BOOST_TEST(modeOf(dir) == 0700u);
    BOOST_REQUIRE(restrictFiles(dir).ok());
    BOOST_TEST(modeOf(dir + "/old.json") == 0600u);
    BOOST_REQUIRE(makePrivateDir(d.path + "/new/deep").ok());
    BOOST_TEST(modeOf(d.path + "/new/deep") == 0700u);
}

// A state file read leaves its inode clean: no access time to journal.
BOOST_AUTO_TEST_CASE(a_state_file_is_read_without_touching_its_access_time) {
    taskscope::test::TempDir d;
    const auto f = d.path + "/exit";
    BOOST_REQUIRE(writeFileAtomic(f, "exited 3\n").ok());
    // An access time older than the change: relatime would update it.
    const struct timespec old[2] = {{1, 0}, {0, UTIME_OMIT}};
    BOOST_REQUIRE(::utimensat(AT_FDCWD, f.c_str(), old, 0) == 0);
    auto text = readStateFile(f);
    BOOST_REQUIRE(text.ok());
    BOOST_TEST(*text == "exited 3\n");
    struct stat st {};
    BOOST_REQUIRE(::stat(f.c_str(), &st) == 0);
    BOOST_TEST(st.st_atim.tv_sec == 1);
    auto missing = readStateFile(d.path + "/none");
    BOOST_REQUIRE(!missing.ok());
    BOOST_TEST(missing.error().name == taskscope::common::errors::kNotFound);
}
