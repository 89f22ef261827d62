// The state directory's files (state_store.hpp): task records as JSON,
// each replaced atomically; exit records, aborted marks, process specs.
#include "manager/records/state_store.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "common/files.hpp"
#include "scope/unit_name.hpp"
#include "spec/json_text.hpp"

extern "C" {
#include "common/error_names.hpp"
#include "shim/shim_protocol.h"
}

namespace taskscope::manager {

common::Result<void> StateStore::prepare() const {
    // Task records hold specs with their secrets, and the logs what tasks
    // print: root's alone, also where an older version left them open.
    for (const auto& d : {dir_ + "/tasks", exitsDir(), dir_ + "/logs", processDir()})
        if (auto r = common::makePrivateDir(d); !r) return r;
    for (const auto& d : {dir_ + "/tasks", exitsDir(), processDir()})
        if (auto r = common::restrictFiles(d); !r) return r;
    return {};
}

std::string StateStore::logDir(const std::string& allocId) const {
    return dir_ + "/logs/" + scope::escapeComponent(allocId);
}

std::string StateStore::recordText(const TaskRecord& record) { return task::toJson(record).dump() + "\n"; }

common::Result<void> StateStore::save(const TaskRecord& record) const {
    return common::writeFileAtomic(recordFile(record.unit), recordText(record));
}

namespace {

// The stems of the names in `dir` that end in `suffix` ("a.json" -> "a").
common::Result<std::vector<std::string>> stemsEndingIn(const std::string& dir, std::string_view suffix) {
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), &::closedir);
    if (!d) return common::errnoError("open " + dir, errno);
    std::vector<std::string> out;
    while (auto* e = ::readdir(d.get())) {
        const std::string_view name = e->d_name;
        if (name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
            out.emplace_back(name.substr(0, name.size() - suffix.size()));
    }
    return out;
}

}  // namespace

common::Result<StateStore::Loaded> StateStore::loadAll() const {
    Loaded out;
    const auto dir = dir_ + "/tasks";
    auto stems = stemsEndingIn(dir, ".json");
    if (!stems) return stems.error();
    for (const auto& stem : *stems) {
        const auto name = stem + ".json";
        const auto path = dir + "/" + name;
        auto rec = [&]() -> common::Result<TaskRecord> {
            auto text = common::readStateFile(path);
            if (!text) return text.error();
            auto j = spec::parseJson(*text, "task record " + name);
            if (!j) return common::makeError(common::errors::kInternal, j.error().message);
            auto r = task::recordFromJson(*j);
            if (!r) return r.error().context("task record " + name);
            return r;
        }();
        if (rec) {
            out.records.push_back(std::move(*rec));
            continue;
        }
        // Set aside under a name loadAll does not read (".json" no longer
        // ends it), where the operator finds it.
        std::string keptAs = path + ".unreadable";
        if (::rename(path.c_str(), keptAs.c_str()) != 0) keptAs.clear();
        out.unreadable.push_back({path, std::move(keptAs), std::move(rec.error())});
    }
    return out;
}

std::string StateStore::abortedMark(const std::string& unit) const { return exitFile(unit) + SHIM_ABORTED_SUFFIX; }

pid_t StateStore::abortedShim(const std::string& unit) const {
    auto text = common::readStateFile(abortedMark(unit));
    const std::string key = std::string(SHIM_ABORTED_SHIM_PID) + "=";
    if (!text || text->rfind(key, 0) != 0) return 0;
    return static_cast<pid_t>(std::atol(text->c_str() + key.size()));
}

std::vector<StateStore::ExitsEntry> StateStore::exitsEntries() const {
    // An exit record is named as its unit (".scope"), a mark as its unit
    // and the suffix; a shim's temporary file ends otherwise.
    static constexpr std::string_view kScope = ".scope";
    static constexpr std::string_view kMark = SHIM_ABORTED_SUFFIX;
    const auto endsIn = [](std::string_view name, std::string_view suffix) {
        return name.size() > suffix.size() && name.ends_with(suffix);
    };
    std::vector<ExitsEntry> out;
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(exitsDir().c_str()), &::closedir);
    if (!d) return out;
    while (auto* e = ::readdir(d.get())) {
        const std::string_view name = e->d_name;
        if (endsIn(name, kMark))
            out.push_back({std::string(name.substr(0, name.size() - kMark.size())), exitsDir() + "/" + e->d_name});
        else if (endsIn(name, kScope))
            out.push_back({std::string(name), exitsDir() + "/" + e->d_name});
    }
    return out;
}

void StateStore::remove(const TaskRecord& record) const {
    ::unlink(recordFile(record.unit).c_str());
    ::unlink(exitFile(record.unit).c_str());
    ::unlink(abortedMark(record.unit).c_str());
    ::unlink(processSpecFile(record.unit).c_str());
}

}  // namespace taskscope::manager
