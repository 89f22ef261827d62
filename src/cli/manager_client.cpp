#include "cli/manager_client.hpp"

#include <iostream>

#include "cli/cli.hpp"
#include "common/bus_error.hpp"
#include "common/sdbus_compat.hpp"

namespace taskscope::cli {

std::optional<Exited> ManagerProxy::exited(const std::string& alloc, const std::string& task) const {
    const auto it = watched_.find({alloc, task});
    return it == watched_.end() ? std::nullopt : it->second;
}

std::string ManagerProxy::getTask(sdbus::IConnection& conn, const std::string& alloc, const std::string& task) {
    taskReply_.reset();
    taskError_.reset();
    proxy_.GetTask(alloc, task);
    pumpUntil(conn, [&] { return taskReply_ || taskError_; });
    if (taskError_) throw *taskError_;
    return *taskReply_;
}

client::ManagerHandlers ManagerProxy::handlers() {
    client::ManagerHandlers on;
    on.getTaskReply = [this](const std::string& json, sdbus_compat::ReplyError error) {
        if (error)
            taskError_ = *error;
        else
            taskReply_ = json;
    };
    on.taskExited = [this](const std::string& alloc, const std::string& task, int32_t code, int32_t sig, bool oom) {
        if (auto it = watched_.find({alloc, task}); it != watched_.end()) it->second = Exited{code, sig, oom};
    };
    return on;
}

wire::TaskInfo readTask(const std::string& json) {
    auto t = wire::parseTaskJson(json);
    if (!t) throw common::toBusError(t.error());
    return std::move(*t);
}

Exited exitOf(const wire::TaskInfo& t) {
    return Exited{t.exitCode.value_or(-1), t.signal, t.oomKilled};
}

Exited awaitExit(sdbus::IConnection& conn, ManagerProxy& m, const std::string& alloc, const std::string& task) {
    const auto t = readTask(m.getTask(conn, alloc, task));
    if (t.finished()) return exitOf(t);
    // Watched before GetTask was asked, so an exit since is already held
    // or on its way.
    pumpUntil(conn, [&] { return m.exited(alloc, task).has_value(); });
    return *m.exited(alloc, task);
}

std::string exitText(const Exited& e) {
    return "code " + std::to_string(e.exitCode) + (e.signal ? ", signal " + std::to_string(e.signal) : "") +
           (e.oom ? ", OOM killed" : "");
}

nlohmann::json exitJson(const Exited& e) {
    return {{"exit_code", e.exitCode}, {"signal", e.signal}, {"oom_killed", e.oom}};
}

int reportExit(const Exited& e, bool json) {
    if (json)
        std::cout << exitJson(e) << "\n";
    else
        std::cout << "exited: " << exitText(e) << "\n";
    return e.exitCode < 0 ? 1 : e.exitCode;
}

int awaitTask(sdbus::IConnection& conn, ManagerProxy& m, const std::string& alloc, const std::string& task, bool json) {
    return reportExit(awaitExit(conn, m, alloc, task), json);
}

}  // namespace taskscope::cli
