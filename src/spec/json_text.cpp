// JSON text parsed with a byte offset in its errors and a bound on its
// nesting (json_text.hpp).
#include "spec/json_text.hpp"

#include <optional>

namespace taskscope::spec {

namespace {

// The byte at which the text first nests deeper than kMaxJsonDepth. Exact
// for valid JSON (brackets inside strings do not count); what it says of
// invalid text does not matter, since the parser refuses that anyway.
std::optional<size_t> tooDeepAt(std::string_view text) {
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth) return i;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return std::nullopt;
}

}  // namespace

common::Result<Json> parseJson(std::string_view text, const std::string& what) {
    // Before the parse: a text too deep never becomes a value at all.
    if (auto at = tooDeepAt(text))
        return invalid(what + " nests deeper than " + std::to_string(kMaxJsonDepth) + " at byte " +
                       std::to_string(*at));
    try {
        return Json::parse(text);
    } catch (const Json::parse_error& e) {
        // e.what() is "[json.exception.parse_error.101] parse error at
        // line L, column C: <why>"; the byte says it in one number. e.byte
        // counts the bytes read, so the offending one is e.byte - 1.
        const std::string full = e.what();
        const auto colon = full.find(": ");
        const size_t at = e.byte > 0 ? e.byte - 1 : 0;
        return invalid(what + " is not valid JSON at byte " + std::to_string(at) + ": " +
                       (colon == std::string::npos ? full : full.substr(colon + 2)));
    } catch (const Json::exception&) {
        // out_of_range 406, a number past a double's range: its message
        // repeats the number, which may be the whole text.
        return invalid(what + " is not valid JSON: a number is out of range");
    }
}

}  // namespace taskscope::spec
