#include "wire/spool.hpp"

#include <nlohmann/json.hpp>

#include "common/error_names.hpp"
#include "spec/json_text.hpp"
#include "wire/field_names.hpp"

namespace taskscope::wire {

namespace {

using field::kAllocId;
using field::kTask;
constexpr const char* kLogDir = "log_dir";
constexpr const char* kMaxFiles = "max_files";
constexpr const char* kMaxFileSizeMb = "max_file_size_mb";
constexpr const char* kExited = "exited";
constexpr const char* kJournal = "journal";
constexpr const char* kTaskPid = "task_pid";
constexpr const char* kForward = "forward";
constexpr const char* kStdoutPath = "stdout_path";
constexpr const char* kStderrPath = "stderr_path";
constexpr const char* kUid = "uid";
// The highest uid there is ((uid_t)-1 means "none" to the kernel).
constexpr int64_t kUidMax = 0xfffffffeLL;
// Above it no pid exists (PID_MAX_LIMIT, include/linux/threads.h).
constexpr int64_t kPidMaxLimit = int64_t{1} << 22;

common::Error bad(const std::string& why) {
    return common::makeError(common::errors::kInvalidArgument, why);
}

}  // namespace

std::string describe(const SpoolDescription& d) {
    auto j = nlohmann::json{{kAllocId, d.allocId},
                          {kTask, d.task},
                          {kLogDir, d.logDir},
                          {kMaxFiles, d.maxFiles},
                          {kMaxFileSizeMb, d.maxFileSizeMb},
                          {kExited, d.exited},
                          {kJournal, d.journal},
                          {kTaskPid, d.taskPid}};
    if (d.forward)
        j[kForward] = {{kStdoutPath, d.forward->stdoutPath},
                       {kStderrPath, d.forward->stderrPath},
                       {kUid, d.forward->uid}};
    return j.dump() + "\n";
}

common::Result<SpoolDescription> parseSpoolDescription(std::string_view text) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    SpoolDescription d;
    try {
        d.allocId = j.at(kAllocId).get<std::string>();
        d.task = j.at(kTask).get<std::string>();
        d.logDir = j.at(kLogDir).get<std::string>();
        // Whole numbers only: nlohmann's value() turns 1e22 into an int
        // with undefined behaviour (fuzz/spool_description found it).
        d.maxFiles = spec::numberOr(j, kMaxFiles, 10);
        d.maxFileSizeMb = spec::numberOr(j, kMaxFileSizeMb, 10);
        d.exited = j.value(kExited, false);
        // Written by a manager before 0.2 without them: no journal copy.
        d.journal = j.value(kJournal, false);
        d.taskPid = spec::numberOr(j, kTaskPid, int64_t{0});
        if (j.contains(kForward)) {
            const auto& f = j.at(kForward);
            if (!f.is_object()) return bad("forward is not an object");
            SpoolDescription::Forward fw;
            fw.stdoutPath = f.value(kStdoutPath, std::string());
            fw.stderrPath = f.value(kStderrPath, std::string());
            fw.uid = spec::numberOr(f, kUid, int64_t{0});
            for (const auto* p : {&fw.stdoutPath, &fw.stderrPath})
                if (!p->empty() && ((*p)[0] != '/' || p->find('\0') != std::string::npos))
                    return bad("a forward path is not absolute");
            if (fw.stdoutPath.empty() && fw.stderrPath.empty()) return bad("forward names no path");
            if (fw.uid < 0 || fw.uid > kUidMax) return bad("bad forward uid");
            d.forward = std::move(fw);
        }
    } catch (const std::exception& e) {  // nlohmann's, and numberOr's invalid_argument
        return bad(e.what());
    }
    if (d.task.empty() || d.task.find('/') != std::string::npos || d.logDir.empty() || d.logDir[0] != '/')
        return bad("bad task or log_dir");
    if (d.maxFiles < 1 || d.maxFileSizeMb < 1) return bad("bad rotation limits");
    // 1 would be init, and a negative pid a process group to journald.
    if (d.taskPid != 0 && (d.taskPid < 2 || d.taskPid > kPidMaxLimit)) return bad("bad task_pid");
    return d;
}

common::Result<std::string> markedExited(std::string_view text) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    j[kExited] = true;
    return j.dump() + "\n";
}

common::Result<std::string> withTaskPid(std::string_view text, int64_t pid) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    j[kTaskPid] = pid;
    return j.dump() + "\n";
}

std::string unitOfDescription(const std::string& name) {
    const std::string suffix = std::string(".") + kSpoolDescription;
    if (name.size() <= suffix.size() || name[0] == '.') return "";
    if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) return "";
    return name.substr(0, name.size() - suffix.size());
}

}  // namespace taskscope::wire
