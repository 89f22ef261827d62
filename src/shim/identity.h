/*
 * Becoming the task (issue 14, "one way to become the task"): the task
 * child (child.c) and every command exec'd into the task (exec.c) take the
 * same capabilities, groups, ids and no_new_privs with the same code, from
 * the same options (options.h; for exec, the task's saved process spec).
 */
#ifndef TASKSCOPE_SHIM_IDENTITY_H
#define TASKSCOPE_SHIM_IDENTITY_H

#include <sys/types.h>

#include "options.h"

/* Takes the task's rlimits and oom_score_adj (limits.c, first: they need
 * root's CAP_SYS_RESOURCE), capabilities (caps.c, crun's order), groups,
 * gid, uid and no_new_privs. Returns 0 or an errno, with the failing step's name. */
int become_task(const struct opts *o, const gid_t *groups, int ngroups, const char **step);

/* Default dispositions and an empty mask, as a freshly exec'd task expects. */
int reset_signals(const char **step);

#endif
