/* The shim's own file descriptors. */
#ifndef TASKSCOPE_SHIM_FDS_H
#define TASKSCOPE_SHIM_FDS_H

/* Closes every fd >= first except keep (-1: none). */
void close_from(int first, int keep);

/* Fills any gap in fds 0-2 with /dev/null: fds the task inherits or that
 * are dup2'd over must not alias the shim's own pipes. */
void ensure_std_fds(void);

#endif
