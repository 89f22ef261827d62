#include "stream/logs/spool.hpp"

#include <dirent.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/files.hpp"

namespace taskscope::stream::logs {

common::Result<TaskLogs> parseDescription(const std::string& unit, const std::string& text) {
    auto d = wire::parseSpoolDescription(text);
    if (!d) return d.error();
    TaskLogs t;
    static_cast<wire::SpoolDescription&>(t) = std::move(*d);
    t.unit = unit;
    return t;
}

std::string describe(const TaskLogs& t) { return wire::describe(t); }

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
    const auto release = fifo(unit, wire::kSpoolRelease);
    (void)common::pokeFifo(release);  // no reader: a task of an older manager, or its shim is gone
    for (const auto* s : kStreams) ::unlink(fifo(unit, s).c_str());
    ::unlink(release.c_str());
    ::unlink(description(unit).c_str());
}

}  // namespace taskscope::stream::logs
