#include "manager/exit_record.hpp"

namespace taskscope::manager {

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
        try {
            if (key == "exit_code") {
                st.exitCode = std::stoi(value);
                sawExit = true;
            } else if (key == "signal") {
                st.signal = std::stoi(value);
            } else if (key == "oom_killed") {
                st.oomKilled = value == "1";
            } else if (key == "finished_at_us") {
                st.finishedAtUs = std::stoull(value);
            } else if (key == "exec_error") {
                st.execError = std::stoi(value);
            } else if (key == "exec_error_step") {
                st.execErrorStep = value;
            }
        } catch (const std::exception&) {
            return common::makeError("Internal", "exit record has a bad value for " + key + ": '" + value + "'");
        }
    }
    if (!sawExit) return common::makeError("Internal", "exit record has no exit_code");
    return st;
}

}  // namespace taskscope::manager
