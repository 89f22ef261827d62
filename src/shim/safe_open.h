/*
 * Opening paths a task or its user can influence (issue 32). The shim is
 * root while it opens the paths a scheduler hands in: log fifos (Nomad's
 * alloc/logs is 0777 and inside every task's view), the task, alloc and
 * secrets dirs and volume sources. No symlink is followed in any component
 * of them (openat2 RESOLVE_NO_SYMLINKS, or one openat O_NOFOLLOW per
 * component before Linux 5.6), and what is found there is checked on the
 * opened fd, then opened for real through that fd (/proc/self/fd), never
 * by its name again. A task that swaps a file for a symlink, a device or
 * a hard link gets a failed start naming the step and the errno, and root
 * writes nothing it names.
 */
#ifndef TASKSCOPE_SHIM_SAFE_OPEN_H
#define TASKSCOPE_SHIM_SAFE_OPEN_H

#include <sys/types.h>

/* Opens an absolute path with flags (O_PATH allowed) and no symlink
 * followed anywhere in it; with O_PATH a symlink at its end is refused
 * too. -1 with errno: ELOOP for a symlink. */
int open_no_symlinks(const char *path, int flags);

/* "/proc/self/fd/N" of fd in b (32 bytes), for calls that take a path. */
const char *fd_path(char b[32], int fd);

/* What a task's stdio may be, and how it is opened:
 *   STREAM_OUT     stdout/stderr: a fifo (opened read-write: never waits for
 *                  a reader, and never raises SIGPIPE), a regular file
 *                  (appended to), /dev/null; created as a regular file
 *                  (0600, root's) when nothing is there.
 *   STREAM_IN      stdin: a fifo, a regular file or /dev/null, read-only.
 *   STREAM_HOLD    a spool fifo the shim holds: a fifo only, read-write,
 *                  non-blocking.
 *   STREAM_RELEASE the spool's release fifo: a fifo only, read-only,
 *                  non-blocking.
 * A fifo or regular file must have one link and belong to the shim's user
 * (root: the scheduler's fifos and files) or to the task's (it could write
 * there itself). ELOOP: a symlink; EISDIR: a directory; ENXIO: another
 * type (a device, a socket); EPERM: another owner; EMLINK: a hard link. */
enum stream { STREAM_OUT, STREAM_IN, STREAM_HOLD, STREAM_RELEASE };
int open_stream(const char *path, enum stream kind, uid_t task_uid);

#endif
