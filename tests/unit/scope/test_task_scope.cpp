#define BOOST_TEST_MODULE task_scope
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "scope/task_scope.hpp"

using namespace taskscope::scope;
namespace bdata = boost::unit_test::data;

namespace {
constexpr const char* kSlice = "nomad.slice";
constexpr const char* kUnit = "a1-web.scope";
}  // namespace

BOOST_AUTO_TEST_CASE(the_tasks_scope_under_the_slice_is_its_own) {
    auto p = checkTaskScope("/nomad.slice/a1-web.scope", kSlice, kUnit);
    BOOST_REQUIRE(p.ok());
    BOOST_TEST(p->str() == "/nomad.slice/a1-web.scope");
    // A nested slice ("nomad-x.slice" below nomad.slice) still has the slice above it.
    BOOST_TEST(checkTaskScope("/nomad.slice/nomad-x.slice/a1-web.scope", kSlice, kUnit).ok());
    // The nested layout's path (issue 31): share, bucket, allocation.
    BOOST_TEST(checkTaskScope("/nomad.slice/nomad-share.slice/nomad-share-b1f.slice/nomad-share-b1f-a1.slice/a1-web.scope",
                              kSlice, kUnit)
                   .ok());
    BOOST_TEST(checkTaskScope("/nomad.slice/nomad-reserve.slice/nomad-reserve-a1.slice/a1-web.scope", kSlice, kUnit).ok());
    BOOST_TEST(checkTaskScope("/a1-web.scope", "-.slice", kUnit).ok());
    auto f = taskScopeFile("/sys/fs/cgroup", "/nomad.slice/a1-web.scope", kSlice, kUnit, "cgroup.kill");
    BOOST_REQUIRE(f.ok());
    BOOST_TEST(*f == "/sys/fs/cgroup/nomad.slice/a1-web.scope/cgroup.kill");
}

// What /proc/<pid>/cgroup can say under an unexpected layout, or what a
// record on disk can hold: none of it is ever a kill target.
static const char* const kForeign[] = {
    "",                                 // no cgroup line at all
    "/",                                // the root: of the host, or of a container's namespace
    "/nomad.slice",                     // the slice itself: every task
    "/nomad.slice/a1-db.scope",         // another task
    "/system.slice/a1-web.scope",       // the name, outside the slice
    "/a1-web.scope",                    // the name at the root, the slice configured
    "/nomad.slice/a1-web.scope/child",  // below the scope: not the scope itself
    "/nomad.slice/../a1-web.scope",     // climbing
    "nomad.slice/a1-web.scope",         // relative
    "/nomad.slice//a1-web.scope",       // an empty component
    "/nomad.slice/a1-web.scope.evil",   // a longer name
};

BOOST_DATA_TEST_CASE(foreign_cgroups_are_refused_with_the_path_named, bdata::make(kForeign), cgroup) {
    auto p = checkTaskScope(cgroup, kSlice, kUnit);
    BOOST_REQUIRE(!p.ok());
    BOOST_TEST(p.error().name == "InvalidArgument");
    BOOST_TEST(p.error().message.find("'" + std::string(cgroup) + "'") != std::string::npos, p.error().message);
    BOOST_TEST(!taskScopeFile("/sys/fs/cgroup", cgroup, kSlice, kUnit, "cgroup.kill").ok());
}

BOOST_AUTO_TEST_CASE(an_empty_unit_is_nobodys_scope) {
    BOOST_TEST(!checkTaskScope("/nomad.slice/a1-web.scope", kSlice, "").ok());
    BOOST_TEST(!inTaskScope("0::/nomad.slice/a1-web.scope\n", kSlice, ""));
}

BOOST_AUTO_TEST_CASE(a_process_in_the_scope_or_below_it_is_the_tasks) {
    BOOST_TEST(inTaskScope("0::/nomad.slice/a1-web.scope\n", kSlice, kUnit));
    BOOST_TEST(inTaskScope("0::/nomad.slice/a1-web.scope/sub\n", kSlice, kUnit));
    BOOST_TEST(inTaskScope("0::/nomad.slice/nomad-share.slice/nomad-share-b1f.slice/nomad-share-b1f-a1.slice/a1-web.scope\n",
                           kSlice, kUnit));
    // cgroup v1: name=systemd says it, whatever the other hierarchies say.
    BOOST_TEST(
        inTaskScope("12:memory:/nomad.slice/a1-web.scope\n1:name=systemd:/nomad.slice/a1-web.scope\n", kSlice, kUnit));
    BOOST_TEST(!inTaskScope("0::/\n", kSlice, kUnit));
    BOOST_TEST(!inTaskScope("0::/system.slice/a1-web.scope\n", kSlice, kUnit));
    BOOST_TEST(!inTaskScope("0::/nomad.slice/a1-web.scope.evil\n", kSlice, kUnit));
    BOOST_TEST(!inTaskScope("0::/nomad.slice/a1-db.scope\n", kSlice, kUnit));
    BOOST_TEST(!inTaskScope("", kSlice, kUnit));
}
