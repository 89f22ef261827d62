#pragma once
// The log side of the manager watch: a task the manager forgets loses its
// record of complete logs, and its allocation's log directory goes with
// the allocation's last task (dbus/org.taskscope.Streamer1.xml, retention).

#include "stream/daemon/manager_watch.hpp"
#include "stream/logs/streamer.hpp"

namespace taskscope::stream::daemon {

class LogRetention final : public TaskRoster {
public:
    explicit LogRetention(logs::Streamer& streamer) : streamer_(streamer) {}

    void managerTasks(const std::set<std::string>& units) override { streamer_.retainOnly(units); }
    void taskForgotten(const std::string& unit) override { streamer_.forget(unit); }

private:
    logs::Streamer& streamer_;
};

}  // namespace taskscope::stream::daemon
