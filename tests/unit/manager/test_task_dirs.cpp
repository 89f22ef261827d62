#define BOOST_TEST_MODULE task_dirs
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "manager/task_dirs.hpp"

using namespace taskscope::manager;
using taskscope::spec::Isolation;
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

// A start cut off before its record was written leaves its dirs and no task
// to remove them: recovery sweeps what no known task owns, and nothing else.
BOOST_AUTO_TEST_CASE(recovery_sweeps_the_dirs_no_task_owns_and_keeps_the_rest) {
    StateDir s;
    fs::create_directories(s.dir / "tasks-root/a/tasks/web/tmp");
    fs::create_directories(s.dir / "tasks-root/a/tasks/cut");      // a's task, no record
    fs::create_directories(s.dir / "tasks-root/gone/tasks/t/etc");  // an allocation of no task
    fs::create_directories(s.dir / "tasks-root/gone/alloc");
    fs::create_directories(s.dir / ("tasks-root/" + taskRootDir("", "x y", "t w").substr(12)));
    const auto n = sweepUnownedTaskDirs(s.dir, {{"a", "web"}, {"x y", "t w"}});
    BOOST_TEST(n == 2u);
    BOOST_TEST(fs::exists(s.dir / "tasks-root/a/tasks/web/tmp"));
    BOOST_TEST(fs::exists(s.dir / "tasks-root/a/alloc/data/f"));
    BOOST_TEST(!fs::exists(s.dir / "tasks-root/a/tasks/cut"));
    BOOST_TEST(!fs::exists(s.dir / "tasks-root/gone"));
    BOOST_TEST(fs::exists(taskRootDir(s.dir, "x y", "t w")));  // escaped names are matched as made
    BOOST_TEST(sweepUnownedTaskDirs(s.dir / "nowhere", {}) == 0u);
}
