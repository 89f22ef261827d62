#include "nomad/config_values.hpp"

namespace taskscope::nomad::config {

using nlohmann::json;

common::Error invalid(const std::string& message) { return common::makeError("InvalidConfig", message); }

common::Result<bool> boolean(const json& v, const std::string& at) {
    if (!v.is_boolean()) return invalid(at + " must be true or false");
    return v.get<bool>();
}

common::Result<std::string> text(const json& v, const std::string& at) {
    if (!v.is_string()) return invalid(at + " must be a string");
    return v.get<std::string>();
}

common::Result<std::vector<std::string>> texts(const json& v, const std::string& at) {
    if (!v.is_array()) return invalid(at + " must be a list of strings");
    std::vector<std::string> out;
    for (const auto& e : v) {
        if (!e.is_string()) return invalid(at + " must be a list of strings");
        out.push_back(e.get<std::string>());
    }
    return out;
}

}  // namespace taskscope::nomad::config
