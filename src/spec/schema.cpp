#include "spec/schema.hpp"

#include "spec/json_text.hpp"

namespace taskscope::spec {

Codec<std::string> text() {
    return {[](const Json& v, const std::string& at, Strictness) -> common::Result<std::string> {
                if (!v.is_string()) return invalid(at + " must be a string");
                return v.get<std::string>();
            },
            [](const std::string& s) { return Json(s); }};
}

Codec<std::string> text(std::function<std::optional<std::string>(const std::string&)> check) {
    return {[check](const Json& v, const std::string& at, Strictness) -> common::Result<std::string> {
                if (!v.is_string()) return invalid(at + " must be a string");
                auto s = v.get<std::string>();
                if (auto why = check(s)) return invalid(at + " " + *why);
                return s;
            },
            [](const std::string& s) { return Json(s); }};
}

Codec<bool> boolean() {
    return {[](const Json& v, const std::string& at, Strictness) -> common::Result<bool> {
                if (!v.is_boolean()) return invalid(at + " must be true or false");
                return v.get<bool>();
            },
            [](const bool& b) { return Json(b); }};
}

Codec<int64_t> integer(int64_t min, int64_t max) {
    return {[min, max](const Json& v, const std::string& at, Strictness) -> common::Result<int64_t> {
                if (!v.is_number_integer()) return invalid(at + " must be an integer");
                const auto n = v.get<int64_t>();
                if (n < min || n > max)
                    return invalid(at + " is " + std::to_string(n) + ", outside " + std::to_string(min) + ".." +
                                   std::to_string(max));
                return n;
            },
            [](const int64_t& n) { return Json(n); }};
}

Codec<std::vector<std::string>> texts() {
    return {[](const Json& v, const std::string& at, Strictness) -> common::Result<std::vector<std::string>> {
                if (!v.is_array()) return invalid(at + " must be an array of strings");
                std::vector<std::string> out;
                for (const auto& s : v) {
                    if (!s.is_string()) return invalid(at + " must be an array of strings");
                    out.push_back(s.get<std::string>());
                }
                return out;
            },
            [](const std::vector<std::string>& v) { return Json(v); }};
}

common::Result<Json> parseObject(std::string_view text, const std::string& what) {
    auto j = parseJson(text, what);
    if (!j) return j.error();
    if (!j->is_object()) return invalid(what + " must be a JSON object");
    return j;
}

}  // namespace taskscope::spec
