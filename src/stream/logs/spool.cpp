#include "stream/logs/spool.hpp"

#include <dirent.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/files.hpp"

namespace taskscope::stream::logs {

namespace {
constexpr std::string_view kJson = ".json";
}

common::Result<TaskLogs> parseDescription(const std::string& unit, const std::string& text) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return common::makeError("InvalidArgument", "not a JSON object");
    TaskLogs t;
    t.unit = unit;
    try {
        t.allocId = j.at("alloc_id").get<std::string>();
        t.task = j.at("task").get<std::string>();
        t.logDir = j.at("log_dir").get<std::string>();
        t.maxFiles = j.value("max_files", 10);
        t.maxFileSizeMb = j.value("max_file_size_mb", 10);
        t.exited = j.value("exited", false);
    } catch (const nlohmann::json::exception& e) {
        return common::makeError("InvalidArgument", e.what());
    }
    if (t.task.empty() || t.task.find('/') != std::string::npos || t.logDir.empty() || t.logDir[0] != '/')
        return common::makeError("InvalidArgument", "bad task or log_dir");
    if (t.maxFiles < 1 || t.maxFileSizeMb < 1) return common::makeError("InvalidArgument", "bad rotation limits");
    return t;
}

std::string describe(const TaskLogs& t) {
    return nlohmann::json{{"alloc_id", t.allocId},
                          {"task", t.task},
                          {"log_dir", t.logDir},
                          {"max_files", t.maxFiles},
                          {"max_file_size_mb", t.maxFileSizeMb},
                          {"exited", t.exited}}
               .dump() +
           "\n";
}

std::string unitOfDescription(const std::string& name) {
    if (name.size() <= kJson.size() || name[0] == '.') return "";
    if (name.compare(name.size() - kJson.size(), kJson.size(), kJson) != 0) return "";
    return name.substr(0, name.size() - kJson.size());
}

common::Result<TaskLogs> Spool::load(const std::string& unit) const {
    auto text = common::readFile(description(unit));
    if (!text) return text.error();
    auto t = parseDescription(unit, *text);
    if (!t) return t.error().context(description(unit));
    return t;
}

std::vector<std::string> Spool::units() const {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir_.c_str());
    if (!d) return out;
    while (const dirent* e = ::readdir(d))
        if (auto u = unitOfDescription(e->d_name); !u.empty()) out.push_back(u);
    ::closedir(d);
    return out;
}

void Spool::remove(const std::string& unit) const {
    // The shim first: a crash before the files go finds the description,
    // and the task is completed (and its shim released) again.
    const auto release = fifo(unit, "release");
    (void)common::pokeFifo(release);  // no reader: a task of an older manager, or its shim is gone
    for (const auto* s : kStreams) ::unlink(fifo(unit, s).c_str());
    ::unlink(release.c_str());
    ::unlink(description(unit).c_str());
}

}  // namespace taskscope::stream::logs
