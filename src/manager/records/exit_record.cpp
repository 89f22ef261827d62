// The shim's key=value exit file read back into an exit status
// (exit_record.hpp), through one table of its keys.
#include "manager/records/exit_record.hpp"

#include <functional>
#include <utility>

#include "common/error_names.hpp"

extern "C" {
#include "shim/shim_protocol.h"
}

namespace taskscope::manager {

namespace {

using Setter = std::function<void(task::ExitStatus&, const std::string&)>;

// The record's keys (shim_protocol.h), each with what it sets; one table.
const std::pair<const char*, Setter> kKeys[] = {
    {SHIM_EXIT_CODE, [](task::ExitStatus& s, const std::string& v) { s.exitCode = std::stoi(v); }},
    {SHIM_EXIT_SIGNAL, [](task::ExitStatus& s, const std::string& v) { s.signal = std::stoi(v); }},
    {SHIM_EXIT_OOM_KILLED, [](task::ExitStatus& s, const std::string& v) { s.oomKilled = v == "1"; }},
    {SHIM_EXIT_FINISHED_AT, [](task::ExitStatus& s, const std::string& v) { s.finishedAtUs = std::stoull(v); }},
    {SHIM_EXIT_EXEC_ERROR, [](task::ExitStatus& s, const std::string& v) { s.execError = std::stoi(v); }},
    {SHIM_EXIT_EXEC_STEP, [](task::ExitStatus& s, const std::string& v) { s.execErrorStep = v; }},
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
            try {
                set(st, value);
            } catch (const std::exception&) {
                return common::makeError(common::errors::kInternal,
                                         "exit record has a bad value for " + key + ": '" + value + "'");
            }
            sawExit |= key == SHIM_EXIT_CODE;
        }
    }
    if (!sawExit)
        return common::makeError(common::errors::kInternal, std::string("exit record has no ") + SHIM_EXIT_CODE);
    return st;
}

}  // namespace taskscope::manager
