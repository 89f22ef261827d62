#pragma once
// The PATH a process taskscope starts gets when nothing sets one: a task
// whose spec sets none, an exec session in it, a CNI plugin. Spelled once,
// so that a task and an exec into it find the same binaries; /sbin and
// /bin last, for roots whose /bin is not a link to /usr/bin.

namespace taskscope::common {

inline constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

}  // namespace taskscope::common
