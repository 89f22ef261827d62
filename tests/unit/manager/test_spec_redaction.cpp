#define BOOST_TEST_MODULE spec_redaction
#include <boost/test/unit_test.hpp>

#include "manager/bus_adaptor.hpp"
#include "manager/spec_redaction.hpp"

using namespace taskscope::manager;
using nlohmann::json;

namespace {

const char* kSecret = "hunter2-db-password";

bool mentionsSecret(const std::string& text) { return text.find(kSecret) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(env_values_are_replaced_keys_kept) {
    const json spec = {{"command", "/bin/sleep"},
                       {"args", {"60"}},
                       {"env", {{"DB_PASSWORD", kSecret}, {"PATH", "/usr/bin"}}},
                       {"user", "nobody"}};
    const auto r = redactSpec(spec);
    BOOST_TEST(r["env"]["DB_PASSWORD"] == kRedactedValue);
    BOOST_TEST(r["env"]["PATH"] == kRedactedValue);
    BOOST_TEST(r["env"].size() == 2u);
    BOOST_TEST(r["args"] == json({"60"}));
    BOOST_TEST(r["command"] == "/bin/sleep");
    BOOST_TEST(r["user"] == "nobody");
    BOOST_TEST(!mentionsSecret(r.dump()));
}

BOOST_AUTO_TEST_CASE(secret_args_are_replaced_only_when_marked) {
    json spec = {{"command", "/usr/bin/mysql"}, {"args", {"-p", kSecret}}};
    BOOST_TEST(mentionsSecret(redactSpec(spec).dump()));
    spec["secret_args"] = false;
    BOOST_TEST(mentionsSecret(redactSpec(spec).dump()));
    spec["secret_args"] = true;
    const auto r = redactSpec(spec);
    BOOST_TEST(r["args"] == json({kRedactedValue, kRedactedValue}));
    BOOST_TEST(!mentionsSecret(r.dump()));
}

BOOST_AUTO_TEST_CASE(malformed_specs_leak_nothing) {
    BOOST_TEST(redactSpec(json(kSecret)) == json(kRedactedValue));
    BOOST_TEST(redactSpec(json::array({kSecret})) == json(kRedactedValue));
    BOOST_TEST(redactSpec(json{{"env", kSecret}})["env"] == kRedactedValue);
    BOOST_TEST(redactSpec(json{{"args", kSecret}, {"secret_args", true}})["args"] == kRedactedValue);
    BOOST_TEST(!mentionsSecret(redactSpecJson(std::string("{\"env\":{\"A\":\"") + kSecret + "\"")));
    BOOST_TEST(!mentionsSecret(redactSpecJson(std::string("\"") + kSecret + "\"")));
}

BOOST_AUTO_TEST_CASE(a_spec_without_secrets_is_unchanged) {
    const json spec = {{"command", "/bin/true"}, {"resources", {{"memory_mb", 64}}}};
    BOOST_TEST(redactSpec(spec) == spec);
}

BOOST_AUTO_TEST_CASE(get_task_json_is_redacted_unless_full) {
    TaskRecord r;
    r.allocId = "a1";
    r.name = "web";
    r.unit = "a1-web.scope";
    r.specJson = json{{"command", "/bin/sleep"}, {"env", {{"DB_PASSWORD", kSecret}}}}.dump();
    const auto redacted = json::parse(taskJson(r, SpecView::Redacted));
    BOOST_TEST(!mentionsSecret(redacted.dump()));
    BOOST_TEST(redacted["spec"]["env"]["DB_PASSWORD"] == kRedactedValue);
    const auto full = json::parse(taskJson(r, SpecView::Full));
    BOOST_TEST(full["spec"]["env"]["DB_PASSWORD"] == kSecret);
}
