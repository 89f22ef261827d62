#define BOOST_TEST_MODULE cty_msgpack
#include <boost/test/unit_test.hpp>
#include <msgpack.hpp>

#include "nomad/cty_msgpack.hpp"

using taskscope::nomad::ctyInteger;
using taskscope::nomad::decodeCty;

namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

std::string bytes(const msgpack::sbuffer& b) { return std::string(b.data(), b.size()); }

}  // namespace

BOOST_AUTO_TEST_CASE(object_of_primitives) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_map(4);
    pk.pack(std::string("command"));
    pk.pack(std::string("/bin/sh"));
    pk.pack(std::string("args"));
    pk.pack(std::vector<std::string>{"-c", "true"});
    pk.pack(std::string("enabled"));
    pk.pack(true);
    pk.pack(std::string("missing"));
    pk.pack_nil();
    auto v = decodeCty(bytes(b));
    BOOST_REQUIRE(v);
    BOOST_TEST((*v)["command"].get<std::string>() == "/bin/sh");
    BOOST_TEST((*v)["args"].size() == 2u);
    BOOST_TEST((*v)["args"][1].get<std::string>() == "true");
    BOOST_TEST((*v)["enabled"].get<bool>());
    BOOST_TEST((*v)["missing"].is_null());
}

// go-cty writes a number as an int when it is one, else a float64 when
// that is exact, else its decimal string: all three read as numbers.
BOOST_AUTO_TEST_CASE(numbers_in_every_encoding) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_array(5);
    pk.pack(int64_t{-3});
    pk.pack(uint64_t{512});
    pk.pack(2.0);
    pk.pack(std::string("123456789012345678"));
    pk.pack(2.5);
    auto v = decodeCty(bytes(b));
    BOOST_REQUIRE(v);
    BOOST_TEST(*ctyInteger((*v)[0], "a") == -3);
    BOOST_TEST(*ctyInteger((*v)[1], "b") == 512);
    BOOST_TEST(*ctyInteger((*v)[2], "c") == 2);
    BOOST_TEST(*ctyInteger((*v)[3], "d") == 123456789012345678);
    auto frac = ctyInteger((*v)[4], "e");
    BOOST_TEST(!frac);
    BOOST_TEST(frac.error().name == "InvalidConfig");
    BOOST_TEST(!ctyInteger(nlohmann::json("12x"), "f"));
}

// An attribute of type "any" (cty's dynamic pseudo-type) comes as
// [type as JSON bytes, value]; the value is what the config says.
BOOST_AUTO_TEST_CASE(dynamic_values_unwrapped) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_map(2);
    pk.pack(std::string("port"));
    pk.pack_array(2);
    const std::string type = "\"number\"";
    pk.pack_bin(static_cast<uint32_t>(type.size()));
    pk.pack_bin_body(type.data(), static_cast<uint32_t>(type.size()));
    pk.pack(8080);
    pk.pack(std::string("labels"));
    pk.pack_array(2);
    const std::string ltype = "[\"map\",\"string\"]";
    pk.pack_bin(static_cast<uint32_t>(ltype.size()));
    pk.pack_bin_body(ltype.data(), static_cast<uint32_t>(ltype.size()));
    pk.pack(std::map<std::string, std::string>{{"a", "b"}});
    auto v = decodeCty(bytes(b));
    BOOST_REQUIRE(v);
    BOOST_TEST((*v)["port"].get<int>() == 8080);
    BOOST_TEST((*v)["labels"]["a"].get<std::string>() == "b");
}

BOOST_AUTO_TEST_CASE(unknown_value_is_null) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_map(1);
    pk.pack(std::string("x"));
    pk.pack_ext(1, 0);
    const char zero = 0;
    pk.pack_ext_body(&zero, 1);
    auto v = decodeCty(bytes(b));
    BOOST_REQUIRE(v);
    BOOST_TEST((*v)["x"].is_null());
}

BOOST_AUTO_TEST_CASE(empty_is_empty_object) {
    auto v = decodeCty("");
    BOOST_REQUIRE(v);
    BOOST_TEST(v->is_object());
    BOOST_TEST(v->empty());
}

BOOST_AUTO_TEST_CASE(bad_bytes_are_named_errors) {
    auto truncated = decodeCty(std::string("\x82\xa1", 2));
    BOOST_REQUIRE(!truncated);
    BOOST_TEST(truncated.error().name == "InvalidConfig");
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack(1);
    pk.pack(2);
    auto trailing = decodeCty(bytes(b));
    BOOST_REQUIRE(!trailing);
    BOOST_TEST(trailing.error().name == "InvalidConfig");
    msgpack::sbuffer m;
    Packer mk(m);
    mk.pack_map(1);
    mk.pack(1);
    mk.pack(2);
    BOOST_TEST(!decodeCty(bytes(m)));  // a non-string key
}

// A container's count is checked against the input before msgpack-c
// allocates its elements: these 8 bytes claimed 2.3 billion of them (an
// allocation of tens of GB) until issue 58's fuzzing found it.
BOOST_AUTO_TEST_CASE(a_count_past_the_input_is_refused_before_allocating) {
    auto v = decodeCty(std::string("\x82\x87\xdd\x87\x87\x87\x87\x87", 8));
    BOOST_REQUIRE(!v);
    BOOST_TEST(v.error().name == "InvalidConfig");
    BOOST_TEST(v.error().message.find("elements at byte 1") != std::string::npos, v.error().message);
    // So is nesting past the bound, before any value is built.
    auto deep = decodeCty(std::string(100, '\x91') + std::string(1, '\xc0'));
    BOOST_REQUIRE(!deep);
    BOOST_TEST(deep.error().name == "InvalidConfig");
}

// Each container of a nested value may claim up to the input's size on its
// own; together they may not claim more elements than there are bytes
// left (msgpack_claims.hpp): 60 arrays, each claiming 1,000 elements, of
// a 1,300-byte input asked msgpack-c for 60 x 1,000 x 24 bytes before.
BOOST_AUTO_TEST_CASE(nested_claims_together_are_held_to_the_bytes) {
    std::string greedy;
    for (int i = 0; i < 60; ++i) greedy += std::string("\xdd\x00\x00\x03\xe8", 5);
    greedy += std::string(1000, '\xc0');
    auto v = decodeCty(greedy);
    BOOST_REQUIRE(!v);
    BOOST_TEST(v.error().name == "InvalidConfig");
    BOOST_TEST(v.error().message.find("a count of 1000 elements at byte 5") != std::string::npos, v.error().message);
    // An honest nested value, its counts exactly its bytes, decodes.
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_map(1);
    pk.pack(std::string("a"));
    pk.pack_array(2);
    pk.pack_array(1);
    pk.pack(1);
    pk.pack_array(0);
    auto ok = decodeCty(bytes(b));
    BOOST_REQUIRE_MESSAGE(ok, (ok ? "" : ok.error().message));
    BOOST_TEST(ok->dump() == R"({"a":[[1],[]]})");
    // A string's length past the end is named with its offset.
    auto cut = decodeCty(std::string("\xda\x10\x00", 3) + "ab");
    BOOST_REQUIRE(!cut);
    BOOST_TEST(cut.error().message.find("a length of 4096 bytes at byte 0") != std::string::npos, cut.error().message);
}

// A cty string is UTF-8; msgpack's str is any bytes. One that is not
// threw out of the driver where the value was printed ("must be a whole
// number, not ..."; the spec it sends): refused at the decode instead.
BOOST_AUTO_TEST_CASE(strings_that_are_not_utf8_are_refused) {
    auto str = [](const std::string& s) { return std::string(1, static_cast<char>(0xA0 | s.size())) + s; };
    for (const std::string bad : {"\xff", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\xe2\x82"}) {
        auto v = decodeCty(str(bad));
        BOOST_REQUIRE(!v);
        BOOST_TEST(v.error().message == "config has a string that is not UTF-8");
    }
    auto key = decodeCty("\x81" + str("\xff") + str("x"));
    BOOST_REQUIRE(!key);
    BOOST_TEST(key.error().message == "config has a key that is not UTF-8");
    for (const std::string good : {"", "plain", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf"}) {
        auto v = decodeCty(str(good));
        BOOST_REQUIRE(v.ok());
        BOOST_TEST(v->get<std::string>() == good);
        BOOST_CHECK_NO_THROW(v->dump());
    }
}
