#include "wire/task_json.hpp"

#include <nlohmann/json.hpp>

namespace taskscope::wire {

common::Result<TaskInfo> parseTaskJson(std::string_view json) {
    const auto j = nlohmann::json::parse(json, nullptr, false);
    if (!j.is_object()) return common::makeError(common::errors::kInternal, "the manager's task description is not a JSON object");
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
            auto s = spec::taskSpecFromJson(spec, spec::Strictness::Lenient);
            if (!s)
                return common::makeError(common::errors::kInternal,
                                         "the manager's task description has a malformed spec: " + s.error().message);
            t.spec = std::move(*s);
        }
        return t;
    } catch (const nlohmann::json::exception& e) {
        return common::makeError(common::errors::kInternal, std::string("the manager's task description is malformed: ") + e.what());
    }
}

}  // namespace taskscope::wire
