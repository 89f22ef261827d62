#pragma once
// The manager as taskscopectl's commands talk to it (main.cpp's task
// commands, alloc_command.cpp): its proxy, the exits of the tasks a command
// waits for, GetTask's reply read through its one reader.

#include <sdbus-c++/sdbus-c++.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "client/proxies.hpp"
#include "wire/task_json.hpp"

namespace taskscope::cli {

/// How a task ended, as TaskExited (or GetTask, once it has) says.
struct Exited {
    int exitCode;
    int signal;
    bool oom;
};

/// The manager (client/proxies.hpp), and the TaskExited of the tasks a
/// command waits for.
class ManagerProxy {
public:
    explicit ManagerProxy(sdbus::IConnection& c) : proxy_(c, handlers()) {}

    /// Keeps the task's TaskExited from now on. Call it before asking
    /// anything of the task, so that the signal cannot slip by.
    void watch(const std::string& alloc, const std::string& task) { watched_[{alloc, task}]; }

    /// A watched task's exit, once its TaskExited has been dispatched.
    std::optional<Exited> exited(const std::string& alloc, const std::string& task) const;

    /// GetTask, waiting for its reply: the generated GetTask is
    /// asynchronous, since the streamer calls it from its event loop.
    std::string getTask(sdbus::IConnection& conn, const std::string& alloc, const std::string& task);

    client::ManagerProxy* operator->() { return &proxy_; }

private:
    client::ManagerHandlers handlers();

    std::map<std::pair<std::string, std::string>, std::optional<Exited>> watched_;
    std::optional<std::string> taskReply_;
    std::optional<sdbus::Error> taskError_;
    client::ManagerProxy proxy_;  ///< last: its handlers point at the above
};

/// GetTask's reply through its one reader (wire/task_json.hpp); a reply it
/// cannot read is thrown as the bus error it names.
wire::TaskInfo readTask(const std::string& json);

/// The exit of a task GetTask says has ended (code -1 when none is known:
/// a lost task).
Exited exitOf(const wire::TaskInfo& t);

/// The task's exit: at once when GetTask says it has ended, else once its
/// TaskExited arrives (watch() it first).
Exited awaitExit(sdbus::IConnection& conn, ManagerProxy& m, const std::string& alloc, const std::string& task);

/// "code 143, signal 15, OOM killed" (the parts that apply).
std::string exitText(const Exited& e);
/// {"exit_code", "signal", "oom_killed"}.
nlohmann::json exitJson(const Exited& e);

/// Prints "exited: ..." (or its JSON) and returns the code to exit with:
/// the task's, 1 when it has none.
int reportExit(const Exited& e, bool json);

/// awaitExit, then reportExit.
int awaitTask(sdbus::IConnection& conn, ManagerProxy& m, const std::string& alloc, const std::string& task, bool json);

}  // namespace taskscope::cli
