// Task unit names and object paths, escaped as systemd escapes
// (unit_name.hpp).
#include "scope/unit_name.hpp"

#include <systemd/sd-bus.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "common/error_names.hpp"

namespace taskscope::scope {

namespace {

bool isPlain(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' || c == '_' ||
           c == '.' || c == '-';
}

void appendEscaped(std::string& out, unsigned char c) {
    char buf[5];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
}

common::Result<void> checkPart(std::string_view what, std::string_view text) {
    if (text.empty()) return common::makeError(common::errors::kInvalidName, std::string(what) + " must not be empty");
    for (unsigned char c : text)
        if (c < 0x20 || c == 0x7f)
            return common::makeError(common::errors::kInvalidName, std::string(what) + " '" + std::string(text) +
                                                        "' contains a control character");
    return {};
}

}  // namespace

std::string escapeComponent(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if ((i == 0 && c == '.') || !isPlain(c))
            appendEscaped(out, static_cast<unsigned char>(c));
        else
            out += c;
    }
    return out;
}

common::Result<std::string> taskScopeName(std::string_view allocId, std::string_view task) {
    if (auto r = checkPart("alloc_id", allocId); !r) return r.error();
    if (auto r = checkPart("task", task); !r) return r.error();
    std::string name = escapeComponent(allocId) + "-" + escapeComponent(task) + ".scope";
    if (name.size() > kUnitNameMax)
        return common::makeError(common::errors::kInvalidName, "unit name for alloc_id '" + std::string(allocId) + "' and task '" +
                                                    std::string(task) + "' is " + std::to_string(name.size()) +
                                                    " characters, longer than systemd's " +
                                                    std::to_string(kUnitNameMax));
    return name;
}

bool isValidSliceName(std::string_view name) {
    constexpr std::string_view suffix = ".slice";
    if (name.size() <= suffix.size() || name.size() > kUnitNameMax) return false;
    if (name.substr(name.size() - suffix.size()) != suffix) return false;
    const auto stem = name.substr(0, name.size() - suffix.size());
    if (stem.front() == '-' || stem.back() == '-' || stem.find("--") != std::string_view::npos) return false;
    for (char c : stem)
        if (!isPlain(c) && c != '\\') return false;
    return true;
}

std::string taskObjectPath(const std::string& prefix, const std::string& unit) {
    char* raw = nullptr;
    if (sd_bus_path_encode(prefix.c_str(), unit.c_str(), &raw) < 0 || raw == nullptr) std::abort();  // ENOMEM only
    std::unique_ptr<char, decltype(&std::free)> path(raw, &std::free);
    return path.get();
}

}  // namespace taskscope::scope
