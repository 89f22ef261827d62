#define BOOST_TEST_MODULE task_dirs
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "manager/launch/task_dirs.hpp"

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

// A task plants links in its dirs (to a host directory, to a host file):
// the removal takes the links themselves and nothing they point to.
BOOST_AUTO_TEST_CASE(removal_follows_no_symlink_a_task_planted) {
    StateDir s;
    const auto host = s.dir / "host";
    fs::create_directories(host / "keep");
    std::ofstream(host / "keep/file") << "host";
    const auto task = s.dir / "tasks-root/a/tasks/t";
    fs::create_directories(task / "local/deep");
    fs::create_symlink(host, task / "local/evil");
    fs::create_symlink(host / "keep/file", task / "local/deep/file-link");
    fs::create_symlink(host, s.dir / "tasks-root/a/alloc/data/evil");
    Isolation iso;
    iso.filesystem = true;  // taskscope made its dir (no task_dir handed in)
    BOOST_REQUIRE(removeTaskDirs(iso, s.dir, "a", "t", true).ok());
    BOOST_TEST(!fs::exists(s.dir / "tasks-root/a"));
    BOOST_TEST(fs::exists(host / "keep/file"));
    BOOST_TEST(fs::exists(host / "keep"));
}

// A handed-in dir reached through a symlink is refused at admission, named.
BOOST_AUTO_TEST_CASE(a_handed_in_dir_through_a_symlink_is_invalid_spec) {
    StateDir s;
    fs::create_directories(s.dir / "real/task");
    fs::create_symlink(s.dir / "real", s.dir / "link");
    Isolation iso;
    iso.filesystem = true;
    iso.taskDir = (s.dir / "link/task").string();
    auto r = prepareTaskDirs(iso, IsolationConfig{}, s.dir, "a", "t");
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().name == "InvalidSpec");
    BOOST_TEST(r.error().message.find("isolation.task_dir") != std::string::npos, r.error().message);
    iso.taskDir = (s.dir / "real/task").string();
    BOOST_TEST(prepareTaskDirs(iso, IsolationConfig{}, s.dir, "a", "t").ok());
}

// The one rule of which dirs are taskscope's (OwnedTaskDirs::of), which a
// failed start's undo and a forget both take: a spec without an isolation
// object gets the node's default; one with it gets what it asked.
BOOST_AUTO_TEST_CASE(owned_dirs_follow_the_nodes_default_only_where_the_spec_is_silent) {
    IsolationConfig node;
    node.defaultIsolated = true;
    taskscope::spec::TaskSpec silent;
    silent.isolationGiven = false;
    const auto defaulted = OwnedTaskDirs::of(silent, node, "/state", "a", "t");
    BOOST_TEST(defaulted.isolation.filesystem);
    BOOST_TEST(defaulted.stateDir == "/state");
    BOOST_TEST(defaulted.allocId == "a");
    BOOST_TEST(defaulted.task == "t");

    taskscope::spec::TaskSpec asked;
    asked.isolationGiven = true;
    asked.isolation.filesystem = false;
    BOOST_TEST(!OwnedTaskDirs::of(asked, node, "/state", "a", "t").isolation.filesystem);

    node.defaultIsolated = false;
    BOOST_TEST(!OwnedTaskDirs::of(silent, node, "/state", "a", "t").isolation.filesystem);
}

BOOST_AUTO_TEST_CASE(owned_dirs_remove_what_a_start_made) {
    StateDir s;
    fs::create_directories(s.dir / "tasks-root/a/tasks/t/tmp");
    IsolationConfig node;
    node.defaultIsolated = true;
    taskscope::spec::TaskSpec silent;
    const auto dirs = OwnedTaskDirs::of(silent, node, s.dir, "a", "t");
    BOOST_REQUIRE(dirs.remove(false).ok());
    BOOST_TEST(!fs::exists(s.dir / "tasks-root/a/tasks/t"));
    BOOST_TEST(fs::exists(s.dir / "tasks-root/a/alloc/data/f"));
    BOOST_REQUIRE(dirs.remove(true).ok());
    BOOST_TEST(!fs::exists(s.dir / "tasks-root/a"));
}
