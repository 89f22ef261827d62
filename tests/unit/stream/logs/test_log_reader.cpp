#define BOOST_TEST_MODULE stream_log_reader
#include <boost/test/unit_test.hpp>

#include "stream/logs/log_reader.hpp"

using namespace taskscope::stream::logs;

namespace {

struct Case {
    const char* name;
    std::vector<LogFile> files;
    Origin origin;
    int64_t offset;
    bool ok;
    LogPosition want;
};

const std::vector<LogFile> kThree = {{4, 100}, {5, 100}, {6, 30}};  // 230 bytes, 0..3 rotated away

const Case kCases[] = {
    {"start of everything", kThree, Origin::Start, 0, true, {4, 0}},
    {"inside the first file", kThree, Origin::Start, 99, true, {4, 99}},
    {"file boundary goes to the next file", kThree, Origin::Start, 100, true, {5, 0}},
    {"inside the last file", kThree, Origin::Start, 229, true, {6, 29}},
    {"exactly the end", kThree, Origin::Start, 230, true, {6, 30}},
    {"past the end from start", kThree, Origin::Start, 231, false, {}},
    {"negative from start", kThree, Origin::Start, -1, false, {}},
    {"end itself", kThree, Origin::End, 0, true, {6, 30}},
    {"back into the last file", kThree, Origin::End, 30, true, {6, 0}},
    {"back across a boundary", kThree, Origin::End, 31, true, {5, 99}},
    {"back to the first byte", kThree, Origin::End, 230, true, {4, 0}},
    {"back past the first byte clamps", kThree, Origin::End, 100000, true, {4, 0}},
    {"negative from end", kThree, Origin::End, -5, false, {}},
    {"empty log from start", {}, Origin::Start, 0, true, {0, 0}},
    {"empty log past the end", {}, Origin::Start, 1, false, {}},
    {"empty log from end", {}, Origin::End, 10, true, {0, 0}},
    {"empty current file after a rotation", {{0, 100}, {1, 0}}, Origin::End, 0, true, {1, 0}},
    {"start skips an empty file", {{0, 0}, {1, 10}}, Origin::Start, 0, true, {1, 0}},
};

}  // namespace

BOOST_AUTO_TEST_CASE(locate_table) {
    for (const auto& c : kCases) {
        BOOST_TEST_CONTEXT(c.name) {
            auto r = locate(c.files, c.origin, c.offset, "the stdout log");
            BOOST_TEST(r.ok() == c.ok);
            if (r.ok() && c.ok) {
                BOOST_TEST(r->index == c.want.index);
                BOOST_TEST(r->offset == c.want.offset);
            }
            if (!r.ok()) BOOST_TEST(r.error().name == "InvalidArgument");
        }
    }
}

BOOST_AUTO_TEST_CASE(past_the_end_names_the_size) {
    auto r = locate(kThree, Origin::Start, 500, "the stdout log");
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message == "offset 500 is past the end of the stdout log (230 bytes)");
}

BOOST_AUTO_TEST_CASE(origins) {
    BOOST_TEST((parseOrigin("start").ok() && *parseOrigin("start") == Origin::Start));
    BOOST_TEST((parseOrigin("end").ok() && *parseOrigin("end") == Origin::End));
    BOOST_TEST(!parseOrigin("middle").ok());
    BOOST_TEST(!parseOrigin("").ok());
}

BOOST_AUTO_TEST_CASE(next_file_skips_deleted) {
    uint64_t next = 0;
    BOOST_TEST(nextFile(kThree, 4, next));
    BOOST_TEST(next == 5u);
    BOOST_TEST(nextFile(kThree, 1, next));  // a reader overtaken by deletion
    BOOST_TEST(next == 4u);
    BOOST_TEST(!nextFile(kThree, 6, next));
}
