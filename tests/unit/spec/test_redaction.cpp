#define BOOST_TEST_MODULE spec_redaction
#include <boost/test/unit_test.hpp>

#include "manager/daemon/bus_adaptor.hpp"
#include "spec/task_spec.hpp"

using namespace taskscope;
using nlohmann::json;
using spec::kRedactedValue;
using spec::parseTaskSpec;
using spec::redacted;
using spec::toJson;

// Redaction works on the typed spec: what any local user sees of a task's
// spec is toJson(redacted(spec)).

namespace {

const char* kSecret = "hunter2-db-password";

bool mentionsSecret(const std::string& text) {
    return text.find(kSecret) != std::string::npos;
}

json view(const json& spec) {
    auto s = spec::taskSpecFromJson(spec);
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
    return toJson(redacted(*s));
}

}  // namespace

BOOST_AUTO_TEST_CASE(env_values_are_replaced_keys_kept) {
    const json spec = {{"command", "/bin/sleep"},
                       {"args", {"60"}},
                       {"env", {{"DB_PASSWORD", kSecret}, {"PATH", "/usr/bin"}}},
                       {"user", "nobody"}};
    const auto r = view(spec);
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
    BOOST_TEST(mentionsSecret(view(spec).dump()));
    spec["secret_args"] = false;
    BOOST_TEST(mentionsSecret(view(spec).dump()));
    spec["secret_args"] = true;
    const auto r = view(spec);
    BOOST_TEST(r["args"] == json({kRedactedValue, kRedactedValue}));
    BOOST_TEST(!mentionsSecret(r.dump()));
}

// A malformed spec never becomes a task (nothing of it is kept to show):
// it is refused before it is typed, and its refusal names no secret value.
BOOST_AUTO_TEST_CASE(malformed_specs_leak_nothing) {
    for (const auto& text : {std::string("\"") + kSecret + "\"", std::string("[\"") + kSecret + "\"]",
                             std::string("{\"command\":\"x\",\"env\":\"") + kSecret + "\"}",
                             std::string("{\"command\":\"x\",\"env\":{\"A\":\"") + kSecret + "\""}) {
        auto s = parseTaskSpec(text);
        BOOST_TEST(!s.ok());
        if (!s.ok()) BOOST_TEST(!mentionsSecret(s.error().message), s.error().message);
    }
}

BOOST_AUTO_TEST_CASE(a_spec_without_secrets_is_unchanged) {
    const json spec = {{"args", json::array()}, {"command", "/bin/true"}, {"resources", {{"memory_mb", 64}}}};
    BOOST_TEST(view(spec) == spec);
}

BOOST_AUTO_TEST_CASE(get_task_json_is_redacted_unless_full) {
    task::TaskRecord r;
    r.allocId = "a1";
    r.name = "web";
    r.unit = "a1-web.scope";
    r.specText = json{{"command", "/bin/sleep"}, {"env", {{"DB_PASSWORD", kSecret}}}}.dump();
    r.spec = *parseTaskSpec(r.specText);
    const auto redactedJson = json::parse(manager::taskJson(r, manager::SpecView::Redacted));
    BOOST_TEST(!mentionsSecret(redactedJson.dump()));
    BOOST_TEST(redactedJson["spec"]["env"]["DB_PASSWORD"] == kRedactedValue);
    const auto full = json::parse(manager::taskJson(r, manager::SpecView::Full));
    BOOST_TEST(full["spec"]["env"]["DB_PASSWORD"] == kSecret);
}
