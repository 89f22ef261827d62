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
