#define BOOST_TEST_MODULE durable_writer
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/durable_writer.hpp"
#include "common/event_loop.hpp"
#include "support/temp_dir.hpp"

using namespace std::chrono_literals;
using taskscope::common::DurableWriter;
using taskscope::common::EventLoop;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// Runs the loop until `n` completions have come, or 5 s.
void runUntil(EventLoop& loop, const std::vector<std::string>& seen, size_t n) {
    const auto deadline = EventLoop::Clock::now() + 5s;
    while (seen.size() < n && EventLoop::Clock::now() < deadline) {
        loop.addTimer(EventLoop::Clock::now() + 10ms, [&loop] { loop.quit(); });
        loop.run();
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(writes_land_with_their_mode_and_complete_in_order_on_the_loop) {
    taskscope::test::TempDir dir;
    EventLoop loop;
    DurableWriter w(loop);
    std::vector<std::string> seen;
    for (int i = 0; i < 50; ++i)
        w.write(dir.path + "/f" + std::to_string(i), "content " + std::to_string(i), 0600,
                [&seen, i](auto r) { seen.push_back(r ? std::to_string(i) : r.error().message); });
    BOOST_TEST(seen.empty());  // completions only ever run on the loop
    runUntil(loop, seen, 50);
    BOOST_REQUIRE(seen.size() == 50u);
    for (int i = 0; i < 50; ++i) {
        BOOST_TEST(seen[static_cast<size_t>(i)] == std::to_string(i));
        BOOST_TEST(slurp(dir.path + "/f" + std::to_string(i)) == "content " + std::to_string(i));
        BOOST_TEST(!exists(dir.path + "/f" + std::to_string(i) + ".tmp"));
    }
    struct stat st {};
    BOOST_REQUIRE(::stat((dir.path + "/f0").c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 0777) == 0600u);
}

BOOST_AUTO_TEST_CASE(the_last_operation_on_a_path_wins_and_a_remove_is_never_undone) {
    taskscope::test::TempDir dir;
    EventLoop loop;
    std::vector<std::string> seen;
    {
        DurableWriter w(loop);
        const auto a = dir.path + "/a", b = dir.path + "/b";
        w.write(a, "one", 0600, [&](auto) { seen.push_back("a1"); });
        w.write(a, "two", 0600, [&](auto) { seen.push_back("a2"); });
        w.write(b, "kept?", 0600, [&](auto) { seen.push_back("b1"); });
        w.remove(b, [&](auto r) { seen.push_back(r ? "b-gone" : "b-failed"); });
        w.remove(dir.path + "/never-there", [&](auto r) { seen.push_back(r ? "missing-ok" : "missing-failed"); });
        runUntil(loop, seen, 5);
        BOOST_TEST(slurp(a) == "two");
        BOOST_TEST(!exists(b));
        // flush() waits for the disk without the loop.
        w.write(a, "three", 0600);
        w.flush();
        BOOST_TEST(slurp(a) == "three");
        // The destructor finishes what was asked.
        w.write(a, "four", 0600);
    }
    BOOST_TEST(slurp(dir.path + "/a") == "four");
    BOOST_TEST(seen == (std::vector<std::string>{"a1", "a2", "b1", "b-gone", "missing-ok"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_write_that_cannot_happen_completes_with_the_error) {
    taskscope::test::TempDir dir;
    EventLoop loop;
    DurableWriter w(loop);
    std::vector<std::string> seen;
    w.write(dir.path + "/no/such/dir/f", "x", 0600, [&](auto r) { seen.push_back(r ? "ok" : r.error().message); });
    runUntil(loop, seen, 1);
    BOOST_REQUIRE(seen.size() == 1u);
    BOOST_TEST(seen[0].find("No such file or directory") != std::string::npos);
}

// A drain asks thousands of operations; a start's record must not wait
// for all of them: rounds are capped, and a write asked First goes in the
// next round ahead of those waiting, with what waits for its own path.
BOOST_AUTO_TEST_CASE(a_first_write_goes_ahead_of_a_long_queue_and_keeps_its_paths_order) {
    taskscope::test::TempDir dir;
    EventLoop loop;
    std::vector<std::string> seen;
    DurableWriter w(loop);
    const size_t many = 3 * DurableWriter::kRoundCap;
    // The first starts a round at once; the rest wait for it.
    for (size_t i = 0; i < many; ++i)
        w.write(dir.path + "/f" + std::to_string(i), "x", 0600, [&, i](auto r) {
            BOOST_TEST(r.ok());
            seen.push_back("f" + std::to_string(i));
        });
    w.write(dir.path + "/same", "old", 0600, [&](auto) { seen.push_back("same-old"); });
    w.write(dir.path + "/start", "record", 0600, [&](auto) { seen.push_back("start"); },
            DurableWriter::Priority::First);
    w.write(dir.path + "/same", "new", 0600, [&](auto) { seen.push_back("same-new"); },
            DurableWriter::Priority::First);
    runUntil(loop, seen, many + 3);
    BOOST_REQUIRE(seen.size() == many + 3);
    const auto at = [&](const std::string& name) {
        return static_cast<size_t>(std::find(seen.begin(), seen.end(), name) - seen.begin());
    };
    // Behind the round under way (f0), ahead of everything else waiting.
    BOOST_TEST(at("f0") == 0u);
    BOOST_TEST(at("start") == 1u);
    BOOST_TEST(at("same-old") == 2u);  // taken along by same-new, just before it
    BOOST_TEST(at("same-new") == 3u);
    BOOST_TEST(at("f1") == 4u);
    BOOST_TEST(slurp(dir.path + "/same") == "new");
    BOOST_TEST(slurp(dir.path + "/start") == "record");
    // The others in the order asked.
    for (size_t i = 1; i < many; ++i) BOOST_TEST(at("f" + std::to_string(i - 1)) < at("f" + std::to_string(i)));
}
