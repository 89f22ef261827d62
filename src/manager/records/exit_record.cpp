// The shim's key=value exit file read back into an exit status
// (exit_record.hpp), through one table of its keys.
#include "manager/records/exit_record.hpp"

#include <charconv>
#include <functional>
#include <limits>
#include <utility>

#include "common/error_names.hpp"

extern "C" {
#include "shim/shim_protocol.h"
}

namespace taskscope::manager {

namespace {

using Setter = std::function<bool(task::ExitStatus&, const std::string&)>;

// A whole number in [lo, hi], every byte of it: std::stoi took "1x" as 1
// and std::stoull took "-1" as 2^64-1 (issue 58, read back after a power
// cut or from a file a task's root could reach).
template <typename T>
bool whole(const std::string& v, T& out, T lo, T hi) {
    T n{};
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || v.empty() || n < lo || n > hi) return false;
    out = n;
    return true;
}

// The record's keys (shim_protocol.h), each with what it sets; one table.
// A setter says false for a value that is not the key's.
const std::pair<const char*, Setter> kKeys[] = {
    {SHIM_EXIT_CODE,
     [](task::ExitStatus& s, const std::string& v) {
         return whole(v, s.exitCode, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
     }},
    {SHIM_EXIT_SIGNAL, [](task::ExitStatus& s, const std::string& v) { return whole(v, s.signal, 0, 128); }},
    {SHIM_EXIT_OOM_KILLED,
     [](task::ExitStatus& s, const std::string& v) {
         s.oomKilled = v == "1";
         return v == "0" || v == "1";
     }},
    {SHIM_EXIT_FINISHED_AT,
     [](task::ExitStatus& s, const std::string& v) {
         return whole(v, s.finishedAtUs, decltype(s.finishedAtUs){0}, std::numeric_limits<decltype(s.finishedAtUs)>::max());
     }},
    {SHIM_EXIT_EXEC_ERROR, [](task::ExitStatus& s, const std::string& v) { return whole(v, s.execError, 0, 4095); }},
    {SHIM_EXIT_EXEC_STEP,
     [](task::ExitStatus& s, const std::string& v) {
         s.execErrorStep = v;
         return true;
     }},
};

}  // namespace

common::Result<task::ExitStatus> parseExitFile(const std::string& text) {
    task::ExitStatus st;
    bool sawExit = false;
    size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        const auto line = text.substr(pos, end - pos);
        pos = end + 1;
        const auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        const auto key = line.substr(0, eq);
        const auto value = line.substr(eq + 1);
        for (const auto& [name, set] : kKeys) {
            if (key != name) continue;
            if (!set(st, value))
                return common::makeError(common::errors::kInternal,
                                         "exit record has a bad value for " + key + ": '" + value + "'");
            sawExit |= key == SHIM_EXIT_CODE;
        }
    }
    if (!sawExit)
        return common::makeError(common::errors::kInternal, std::string("exit record has no ") + SHIM_EXIT_CODE);
    return st;
}

}  // namespace taskscope::manager
