/*
 * The task child, between fork and execve: an ordered table of named steps
 * (child.c), each returning 0 or an errno. The first that fails ends the
 * child with exit code 127 after writing "ERRNO STEP" on its error pipe,
 * which the shim reports to the manager as "execfailed ERRNO STEP"; EOF on
 * that pipe (it is CLOEXEC) means the task's program runs.
 */
#ifndef TASKSCOPE_SHIM_CHILD_H
#define TASKSCOPE_SHIM_CHILD_H

#include <sys/types.h>

#include "options.h"

struct child_setup {
    const struct opts *o;
    const gid_t *groups;
    int ngroups;
    int release_rd; /* 'r' from the shim once the task is in its scope; EOF: aborted */
    int errfd;      /* the error pipe's write end */
    char **envp;
};

_Noreturn void run_child(const struct child_setup *c);

#endif
