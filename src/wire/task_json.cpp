#include "wire/task_json.hpp"

#include <nlohmann/json.hpp>

namespace taskscope::wire {

common::Result<TaskInfo> parseTaskJson(std::string_view json) {
    const auto j = nlohmann::json::parse(json, nullptr, false);
    if (!j.is_object()) return common::makeError("Internal", "the manager's task description is not a JSON object");
    try {
        TaskInfo t;
        t.allocId = j.value("alloc_id", std::string());
        t.task = j.value("task", std::string());
        t.state = j.at("state").get<std::string>();
        t.pid = j.at("pid").get<int64_t>();
        t.unit = j.at("unit").get<std::string>();
        t.cgroup = j.at("cgroup").get<std::string>();
        t.processSpec = j.value("process_spec", std::string());
        auto spec = j.at("spec");
        if (spec.is_string()) spec = nlohmann::json::parse(spec.get<std::string>(), nullptr, false);
        if (spec.is_object()) {
            TaskSpecFields s;
            s.user = spec.value("user", s.user);
            s.group = spec.value("group", s.group);
            s.cwd = spec.value("cwd", s.cwd);
            if (spec.contains("env")) s.env = spec.at("env").get<std::map<std::string, std::string>>();
            s.logs = spec.value("logs", s.logs);
            t.spec = std::move(s);
        }
        return t;
    } catch (const nlohmann::json::exception& e) {
        return common::makeError("Internal", std::string("the manager's task description is malformed: ") + e.what());
    }
}

}  // namespace taskscope::wire
