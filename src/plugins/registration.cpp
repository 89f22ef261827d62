// A plugin's registration file, both ways (registration.hpp).
#include "plugins/registration.hpp"

#include "common/error_names.hpp"
#include "spec/json_text.hpp"

namespace taskscope::plugins {

namespace {

using common::Result;
using spec::Json;

// The fields as a table: name and member, read and written alike.
const std::pair<const char*, std::string Registration::*> kTextFields[] = {
    {"type", &Registration::type}, {"name", &Registration::name},         {"alloc_id", &Registration::allocId},
    {"task", &Registration::task}, {"provider", &Registration::provider}, {"version", &Registration::version},
};

common::Error unreadable(const std::string& why) {
    return common::makeError(common::errors::kInternal, "plugin registration " + why);
}

}  // namespace

std::string registrationText(const Registration& r) {
    Json j = Json::object();
    for (const auto& [key, member] : kTextFields) j[key] = r.*member;
    j["capabilities"] = r.capabilities;
    j["healthy"] = r.healthy;
    return j.dump();
}

Result<Registration> parseRegistration(std::string_view text) {
    auto j = spec::parseJson(text, "plugin registration");
    if (!j) return common::makeError(common::errors::kInternal, j.error().message);
    if (!j->is_object()) return unreadable("is not a JSON object");
    // nlohmann's value(key, default) throws when the key holds another
    // type: each field's type is checked first, so no read throws.
    Registration r;
    for (const auto& [key, member] : kTextFields) {
        const auto it = j->find(key);
        if (it == j->end()) continue;
        if (!it->is_string()) return unreadable(std::string("field ") + key + " is not a string");
        r.*member = it->get<std::string>();
    }
    if (const auto it = j->find("capabilities"); it != j->end()) {
        if (!it->is_array()) return unreadable("field capabilities is not an array of strings");
        for (const auto& c : *it) {
            if (!c.is_string()) return unreadable("field capabilities is not an array of strings");
            r.capabilities.push_back(c.get<std::string>());
        }
    }
    if (const auto it = j->find("healthy"); it != j->end()) {
        if (!it->is_boolean()) return unreadable("field healthy is not true or false");
        r.healthy = it->get<bool>();
    }
    return r;
}

}  // namespace taskscope::plugins
