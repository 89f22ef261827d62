/*
 * Where the task is made and where the shim lives: not in the manager's
 * service cgroup, where any `systemctl kill`, stop or OOM kill of the
 * manager's unit would take every shim and with it every exit code, nor in
 * its task's scope (seed 001: the supervisor never joins the task's
 * cgroup), but in the shims' own scope, whose cgroup.procs files the
 * manager names (--join-cgroup).
 *
 * The shim moves itself there only once the task's pid is reported: a
 * move is slow (a cgroup migration waits for an RCU grace period). Forked
 * before that, a plain fork would make the task, held before exec, a
 * process of the manager's service until systemd moves it: counted in its
 * TasksMax, shown under it, taken by a `systemctl kill` of it. On cgroup
 * v2, clone3's CLONE_INTO_CGROUP makes it in the shims' scope directly,
 * which is no move at all. (What the fork allocates, the task's kernel
 * stack and task struct, is still charged to the forking shim's memory
 * cgroup, the manager's at that moment, and stays there: ~36 KiB per task
 * measured.) On v1 and hybrid the shim moves first and forks after.
 */
#ifndef TASKSCOPE_SHIM_CGROUP_HOME_H
#define TASKSCOPE_SHIM_CGROUP_HOME_H

#include <sys/types.h>

#include "options.h"

/* The directory of the one cgroup.procs file to join when it is on cgroup
 * v2 (-1 otherwise: v1 and hybrid join several hierarchies, and a clone can
 * be made into one cgroup only). */
int birth_cgroup(const struct opts *o);

/* fork(), or clone with the isolation's namespace flags, made in `cgroup`
 * when it is >= 0 (-1 if the kernel cannot or will not: nothing made). */
pid_t clone_task(unsigned long cflags, int cgroup);

/* Moves this process into each --join-cgroup (writing 0 to a cgroup.procs
 * file moves the writer). 0, or -errno. */
int join_cgroups(const struct opts *o);

#endif
