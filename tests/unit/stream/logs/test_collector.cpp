#define BOOST_TEST_MODULE stream_collector
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "stream/logs/collector.hpp"
#include "stream/logs/test_logs.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope::stream::logs;
using taskscope::common::UniqueFd;
namespace fs = std::filesystem;

namespace {

struct Fixture {
    taskscope::test::TempDir tmp;
    std::string dir = tmp.path;
    std::string fifo = dir + "/t.stdout";
    Fixture() { BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0); }
};


}  // namespace

BOOST_FIXTURE_TEST_CASE(moves_fifo_data_into_rotated_files, Fixture) {
    UniqueFd reader(::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    UniqueFd writer(::open(fifo.c_str(), O_WRONLY | O_CLOEXEC));
    BOOST_REQUIRE(reader && writer);
    StreamCollector c(std::move(reader), Rotator(dir, "t.stdout", 100, 1000));
    BOOST_REQUIRE(c.open().ok());
    std::string sent;
    for (int i = 1; i <= 1000; ++i) sent += std::to_string(i) + "\n";
    BOOST_REQUIRE(::write(writer.get(), sent.data(), sent.size()) == static_cast<ssize_t>(sent.size()));
    auto d = c.drain(1 << 20);
    BOOST_TEST(d.empty);
    BOOST_TEST(d.moved == sent.size());
    BOOST_TEST(!d.failed);
    BOOST_TEST(readAll(dir, "t.stdout") == sent);
    for (const auto& f : listLogFiles(dir, "t.stdout")) BOOST_TEST(f.size <= 1000u);
    // Empty fifo with a writer still open: EAGAIN, not EOF.
    auto again = c.drain(1 << 20);
    BOOST_TEST(again.empty);
    BOOST_TEST(again.moved == 0u);
}

BOOST_FIXTURE_TEST_CASE(budget_bounds_one_call, Fixture) {
    UniqueFd reader(::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    StreamCollector c(std::move(reader), Rotator(dir, "t.stdout", 10, 1 << 20));
    BOOST_REQUIRE(c.open().ok());
    const std::string data(5000, 'a');
    BOOST_REQUIRE(::write(c.fifoFd(), data.data(), data.size()) == 5000);
    auto d = c.drain(1000);
    BOOST_TEST(d.moved == 1000u);
    BOOST_TEST(!d.empty);
    while (!c.drain(1000).empty) {
    }
    BOOST_TEST(readAll(dir, "t.stdout") == data);
}

BOOST_FIXTURE_TEST_CASE(unwritable_directory_drops_instead_of_blocking, Fixture) {
    UniqueFd reader(::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    StreamCollector c(std::move(reader), Rotator(dir + "/missing", "t.stdout", 10, 1 << 20));
    BOOST_TEST(!c.open().ok());
    const std::string data(3000, 'b');
    BOOST_REQUIRE(::write(c.fifoFd(), data.data(), data.size()) == 3000);
    auto d = c.drain(1 << 20);
    BOOST_TEST(d.failed.has_value());
    BOOST_TEST(d.empty);  // drained (and dropped): the writer is never blocked for good
    BOOST_TEST(c.dropping());
    // The directory appears: the next probe (a second later) writes again.
    fs::create_directory(dir + "/missing");
    BOOST_REQUIRE(::write(c.fifoFd(), "ok\n", 3) == 3);
    auto r = c.drain(1 << 20, StreamCollector::Clock::now() + std::chrono::seconds(2));
    BOOST_TEST(!c.dropping());
    BOOST_TEST(r.recoveredAfterDropping == 3000u);
    BOOST_TEST(readAll(dir + "/missing", "t.stdout") == "ok\n");
}
