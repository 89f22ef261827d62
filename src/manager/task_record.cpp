#include "manager/task_record.hpp"

#include <ctime>

#include "common/cpu_list.hpp"

namespace taskscope::manager {

namespace {

constexpr std::pair<TaskState, const char*> kStates[] = {
    {TaskState::Starting, "starting"}, {TaskState::Running, "running"}, {TaskState::Stopping, "stopping"},
    {TaskState::Exited, "exited"},     {TaskState::Lost, "lost"},
};

}  // namespace

std::string toString(TaskState state) {
    for (const auto& [s, name] : kStates)
        if (s == state) return name;
    return "unknown";
}

common::Result<ExitStatus> parseExitFile(const std::string& text) {
    ExitStatus st;
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

std::string formatTime(uint64_t us) {
    if (us == 0) return "";
    const time_t secs = static_cast<time_t>(us / 1000000);
    tm t{};
    gmtime_r(&secs, &t);
    char buf[64];
    const size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &t);
    char frac[16];
    snprintf(frac, sizeof frac, ".%06lluZ", static_cast<unsigned long long>(us % 1000000));
    return std::string(buf, n) + frac;
}

nlohmann::json toJson(const TaskRecord& r) {
    return {
        {"alloc_id", r.allocId},
        {"task", r.name},
        {"unit", r.unit},
        {"spec", r.specJson},
        {"state", toString(r.state)},
        {"pid", r.pid},
        {"shim_pid", r.shimPid},
        {"cgroup", r.cgroup},
        {"process_spec", r.processSpec},
        {"cpus", common::formatCpuList(r.cpus)},
        {"reserved_cores", r.reservedCores},
        {"started_at_us", r.startedAtUs},
        {"exit_code", r.exit.exitCode},
        {"signal", r.exit.signal},
        {"oom_killed", r.exit.oomKilled},
        {"finished_at_us", r.exit.finishedAtUs},
        {"exec_error", r.exit.execError},
        {"exec_error_step", r.exit.execErrorStep},
        {"exit_reported", r.exitReported},
        {"kill_deadline_us", r.killDeadlineUs},
        {"lost_reason", r.lostReason},
    };
}

common::Result<TaskRecord> recordFromJson(const nlohmann::json& j) {
    try {
        TaskRecord r;
        r.allocId = j.at("alloc_id").get<std::string>();
        r.name = j.at("task").get<std::string>();
        r.unit = j.at("unit").get<std::string>();
        r.specJson = j.at("spec").get<std::string>();
        const auto state = j.at("state").get<std::string>();
        bool known = false;
        for (const auto& [s, name] : kStates)
            if (state == name) {
                r.state = s;
                known = true;
            }
        if (!known) return common::makeError("Internal", "unknown task state '" + state + "'");
        r.pid = j.at("pid").get<pid_t>();
        r.shimPid = j.at("shim_pid").get<pid_t>();
        r.cgroup = j.at("cgroup").get<std::string>();
        r.processSpec = j.value("process_spec", std::string());
        r.startedAtUs = j.at("started_at_us").get<uint64_t>();
        auto cpus = common::parseCpuList(j.value("cpus", ""));
        if (!cpus) return cpus.error().context("task record cpus");
        r.cpus = *cpus;
        r.reservedCores = j.value("reserved_cores", false);
        r.exit.exitCode = j.at("exit_code").get<int>();
        r.exit.signal = j.at("signal").get<int>();
        r.exit.oomKilled = j.at("oom_killed").get<bool>();
        r.exit.finishedAtUs = j.at("finished_at_us").get<uint64_t>();
        r.exit.execError = j.value("exec_error", 0);
        r.exit.execErrorStep = j.value("exec_error_step", "");
        r.exitReported = j.at("exit_reported").get<bool>();
        r.killDeadlineUs = j.value("kill_deadline_us", uint64_t{0});  // absent in records of 0.1.0 before it
        r.lostReason = j.value("lost_reason", "");
        return r;
    } catch (const nlohmann::json::exception& e) {
        return common::makeError("Internal", std::string("task record: ") + e.what());
    }
}

}  // namespace taskscope::manager
