#pragma once
// Where the streamer finds taskscope-manager on the bus (its log, exec and
// stats parts all ask it about tasks).

namespace taskscope::stream::daemon {

inline constexpr const char* kManager = "org.taskscope.Manager1";
inline constexpr const char* kManagerPath = "/org/taskscope/Manager1";

}  // namespace taskscope::stream::daemon
