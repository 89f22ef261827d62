#pragma once
// What the manager's record writer has put on disk, for tests of the parts
// that write through it: a record of another unit written behind every
// write asked so far marks the point (the writer keeps the order asked),
// and the record of `unit` is read back as a restart would read it. A
// record's spec text must be a spec (recovery parses it).

#include <boost/test/unit_test.hpp>

#include <string>

#include "common/event_loop.hpp"
#include "manager/records/record_writer.hpp"
#include "manager/records/state_store.hpp"
#include "support/run_loop.hpp"
#include "task/task_record.hpp"

namespace taskscope::test {

inline task::TaskRecord recordOnDisk(common::EventLoop& loop, manager::RecordWriter& records,
                                     const manager::StateStore& store, const std::string& unit) {
    task::TaskRecord marker;
    marker.allocId = "flush";
    marker.name = "marker";
    marker.unit = "flush-marker.scope";
    marker.specText = R"({"command":"/bin/true"})";
    bool done = false;
    records.persist(marker, [&] { done = true; });
    BOOST_REQUIRE(runUntil(loop, [&] { return done; }));
    auto all = store.loadAll();
    BOOST_REQUIRE_MESSAGE(all.ok(), (all.ok() ? std::string() : all.error().message));
    for (auto& r : all->records)
        if (r.unit == unit) return r;
    BOOST_FAIL("no record of " + unit + " on disk");
    return {};
}

}  // namespace taskscope::test
