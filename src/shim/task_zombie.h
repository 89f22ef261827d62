/*
 * The ended task kept unreaped (--keep-task-zombie). journald attributes a
 * line sent on its stream socket by the sender's pid (SCM_CREDENTIALS), and
 * the streamer sends the task's output with the task's pid: a zombie still
 * has its pid and its cgroup, a reaped pid fails the send (ESRCH). So the
 * shim learns the task's exit with WNOWAIT and reaps it only once the
 * streamer has released the logs. The shim is a subreaper: every other
 * child that ends is reaped as always.
 */
#ifndef TASKSCOPE_SHIM_TASK_ZOMBIE_H
#define TASKSCOPE_SHIM_TASK_ZOMBIE_H

#include <sys/types.h>

/* Reaps every ended child but `task`, without waiting. 1 when the task has
 * ended (*status its wait status, as waitpid would give it; the task left
 * a zombie), 0 when it has not. */
int reap_all_but(pid_t task, int *status);

/* Waits until the task has ended, without reaping it: *status as above. */
void await_task_unreaped(pid_t task, int *status);

#endif
