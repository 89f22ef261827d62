#pragma once
// Field names more than one of the wire's JSON objects carry (the task
// object, the spool description): one spelling, since a reader matches them
// across files.

namespace taskscope::wire::field {

inline constexpr const char* kAllocId = "alloc_id";
inline constexpr const char* kTask = "task";

}  // namespace taskscope::wire::field
