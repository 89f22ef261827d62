#pragma once
// The names of a task's log files in its allocation's logs dir, which the
// streamer writes (and the manager, for a node without one) and Nomad's
// `alloc logs`, the streamer's readers and log collectors find.

#include <string>
#include <string_view>

namespace taskscope::wire {

/// "<task>.<stream>", each file of it "<task>.<stream>.<index>": the task's
/// name as it is, the way Nomad's logmon names them (hashicorp/nomad
/// client/allocrunner/taskrunner/logmon_hook.go at aa026cc, StdoutLogFile:
/// fmt.Sprintf("%s.stdout", req.Task.Name)), so that collectors globbing
/// <task>.stdout.* find them. A task's name holds no '/' (the manager
/// refuses one), so it is one path component.
inline std::string logFileBase(std::string_view task, std::string_view stream) {
    std::string base(task);
    base += '.';
    base += stream;
    return base;
}

}  // namespace taskscope::wire
