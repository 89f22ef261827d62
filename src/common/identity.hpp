#pragma once
// Who a task (and a command exec'd into it) runs as: a user and optional
// group name resolved in the system's databases, the same way for the
// manager when it starts a task and for the streamer when it execs into one.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace taskscope::common {

struct Identity {
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;  ///< supplementary groups, the primary one included
};

/// A user or group given as a number ("80001"): decimal digits only, below
/// 2^32-1 (the kernel's "no ID"). Such an ID needs no database entry,
/// which Nomad's dynamic workload users never have (helper/users/dynamic).
std::optional<uint32_t> numericId(const std::string& name);

/// The user's uid, the group's gid (the user's primary group when `group`
/// is empty) and the user's groups; UnknownUser when either does not exist.
/// A numeric user or group is that ID: with a database entry the user
/// keeps its primary group and groups, without one its group is the given
/// group or else the same number, and it has no other groups.
Result<Identity> resolveIdentity(const std::string& user, const std::string& group);

/// The same, read from the passwd and group files of another root (an
/// isolated task's, whose /etc may not be the host's): `etcDir` holds them.
/// UnknownUser also when the files cannot be read (named in the message),
/// which includes a symlink anywhere in their path (the task can write its root).
Result<Identity> resolveIdentityIn(const std::string& etcDir, const std::string& user, const std::string& group);

}  // namespace taskscope::common
