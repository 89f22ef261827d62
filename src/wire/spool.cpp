#include "wire/spool.hpp"

#include <nlohmann/json.hpp>

#include "common/error_names.hpp"
#include "wire/field_names.hpp"

namespace taskscope::wire {

namespace {

using field::kAllocId;
using field::kTask;
constexpr const char* kLogDir = "log_dir";
constexpr const char* kMaxFiles = "max_files";
constexpr const char* kMaxFileSizeMb = "max_file_size_mb";
constexpr const char* kExited = "exited";

common::Error bad(const std::string& why) {
    return common::makeError(common::errors::kInvalidArgument, why);
}

}  // namespace

std::string describe(const SpoolDescription& d) {
    return nlohmann::json{{kAllocId, d.allocId},
                          {kTask, d.task},
                          {kLogDir, d.logDir},
                          {kMaxFiles, d.maxFiles},
                          {kMaxFileSizeMb, d.maxFileSizeMb},
                          {kExited, d.exited}}
               .dump() +
           "\n";
}

common::Result<SpoolDescription> parseSpoolDescription(std::string_view text) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    SpoolDescription d;
    try {
        d.allocId = j.at(kAllocId).get<std::string>();
        d.task = j.at(kTask).get<std::string>();
        d.logDir = j.at(kLogDir).get<std::string>();
        d.maxFiles = j.value(kMaxFiles, 10);
        d.maxFileSizeMb = j.value(kMaxFileSizeMb, 10);
        d.exited = j.value(kExited, false);
    } catch (const nlohmann::json::exception& e) {
        return bad(e.what());
    }
    if (d.task.empty() || d.task.find('/') != std::string::npos || d.logDir.empty() || d.logDir[0] != '/')
        return bad("bad task or log_dir");
    if (d.maxFiles < 1 || d.maxFileSizeMb < 1) return bad("bad rotation limits");
    return d;
}

common::Result<std::string> markedExited(std::string_view text) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    j[kExited] = true;
    return j.dump() + "\n";
}

std::string unitOfDescription(const std::string& name) {
    const std::string suffix = std::string(".") + kSpoolDescription;
    if (name.size() <= suffix.size() || name[0] == '.') return "";
    if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) return "";
    return name.substr(0, name.size() - suffix.size());
}

}  // namespace taskscope::wire
