#pragma once
// Asks taskscope-manager whether a task runs with log collection off: the
// manager creates no spool entry for such a task, so the streamer cannot
// tell "logs off" from "no such task" by itself. Asynchronous, so the
// event loop never waits for the manager.

#include <functional>
#include <memory>
#include <string>

namespace sdbus {
class IConnection;
class IProxy;
}  // namespace sdbus

namespace taskscope::stream::daemon {

class ManagerLookup {
public:
    explicit ManagerLookup(sdbus::IConnection& connection);
    ~ManagerLookup();
    ManagerLookup(const ManagerLookup&) = delete;
    ManagerLookup& operator=(const ManagerLookup&) = delete;

    /// Calls done(true) when the manager knows the task and its spec has
    /// "logs": false; done(false) otherwise (unknown task, manager error).
    void logsDisabled(const std::string& allocId, const std::string& task, std::function<void(bool)> done);

private:
    std::unique_ptr<sdbus::IProxy> proxy_;
};

}  // namespace taskscope::stream::daemon
