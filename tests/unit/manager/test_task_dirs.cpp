#define BOOST_TEST_MODULE task_dirs
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "manager/task_dirs.hpp"

using namespace taskscope::manager;
namespace fs = std::filesystem;

namespace {
// A state dir as an isolated task of allocation "a" leaves it once its own
// task dir is gone: the allocation's shared alloc/ with a file in it.
struct StateDir {
    fs::path dir = fs::temp_directory_path() / ("taskscope-task-dirs-" + std::to_string(::getpid()));
    StateDir() {
        fs::create_directories(dir / "tasks-root/a/alloc/data");
        fs::create_directories(dir / "tasks-root/a/tasks");
        std::ofstream(dir / "tasks-root/a/alloc/data/f") << "x";
    }
    ~StateDir() { fs::remove_all(dir); }
};
}  // namespace

BOOST_AUTO_TEST_CASE(the_last_task_of_an_allocation_takes_its_dir_even_when_not_isolated) {
    StateDir s;
    Isolation plain;  // the last task runs on the host's root (a plugin task was the isolated one)
    BOOST_REQUIRE(removeTaskDirs(plain, s.dir, "a", "silent", false).ok());
    BOOST_TEST(fs::exists(s.dir / "tasks-root/a/alloc/data/f"));  // another task of "a" is still there
    BOOST_REQUIRE(removeTaskDirs(plain, s.dir, "a", "silent", true).ok());
    BOOST_TEST(!fs::exists(s.dir / "tasks-root/a"));
}

BOOST_AUTO_TEST_CASE(an_allocation_without_dirs_is_nothing_to_remove) {
    StateDir s;
    Isolation plain;
    BOOST_REQUIRE(removeTaskDirs(plain, s.dir, "b", "t", true).ok());
    BOOST_TEST(fs::exists(s.dir / "tasks-root/a/alloc/data/f"));
}
