#pragma once
// A task spec resolved against this system when its start begins: the
// user and group looked up, the executable found, the working directory
// checked. What the spec asks is spec/task_spec.hpp's.

#include "common/result.hpp"
#include "spec/task_spec.hpp"

namespace taskscope::manager {

/// Looks up the user and group (UnknownUser), the executable in the
/// spec's PATH (NoSuchBinary) and the working directory (InvalidSpec).
/// Adds a default PATH to the environment when the spec has none. A task
/// on the host's root is checked against denied_uids/denied_gids
/// (DeniedUser) here; an isolated one by resolveRootIdentity.
common::Result<void> resolveTaskSpec(spec::TaskSpec& spec);

/// For an isolated task whose isolation is resolved (prepareTaskDirs): its
/// user and group looked up in its root's /etc (issue 14), which is the
/// host's only when chroot_env binds /etc. UnknownUser names the file.
/// Root needs no user database there. Then the deny lists, as
/// checkDeniedIds.
common::Result<void> resolveRootIdentity(spec::TaskSpec& spec);

/// DeniedUser when the resolved UID is in the spec's denied_uids, or its
/// GID or any of its groups in denied_gids (as Nomad's exec validator
/// checks the user's group memberships). Called where the identity is
/// resolved, before any of the task's files, dirs or processes exist.
common::Result<void> checkDeniedIds(const spec::TaskSpec& spec);

}  // namespace taskscope::manager
