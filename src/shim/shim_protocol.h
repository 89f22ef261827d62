/*
 * The command line of taskscope-shim, shared by the shim (C) and the
 * manager's launcher (C++): one list of option names, not two hand-kept
 * copies. Only macros, so both languages include it as is.
 *
 * Isolation options (all optional; --root switches isolation on):
 *   --root DIR            the task dir, which becomes the task's "/"
 *   --ro-bind PATH        a host path (chroot_env) bound read-only at the
 *                         same place in the root; missing ones are skipped
 *   --alloc-dir DIR       bound read-write at /alloc
 *   --volume SRC DST OPTS three words: host path, path in the root, and
 *                         "ro"|"rw" "," "private"|"host-to-task"|"bidirectional"
 *   --pid-ns MODE         private (default when isolated) | host
 *   --ipc-ns MODE         private (default when isolated) | host
 *   --caps HEX            capability set (bounding, permitted, effective,
 *                         inheritable and, for a non-root user, ambient)
 *   --no-new-privs 1      PR_SET_NO_NEW_PRIVS before exec
 *   --secrets-size BYTES  size of the secrets/ tmpfs
 *   --secrets-dir DIR     bound read-write at secrets/ instead of the tmpfs
 *                         (a scheduler's own secrets dir, e.g. Nomad's)
 */
#ifndef TASKSCOPE_SHIM_PROTOCOL_H
#define TASKSCOPE_SHIM_PROTOCOL_H

#include <stdint.h>

/* The task's identity and working directory (a decimal uid and gid, a
 * comma list of decimal gids, a path in the task's root). With cwd and the
 * isolation options below they make the task's process spec, which the
 * manager also saves (NUL-separated words, mode 0600) for exec. */
#define SHIM_OPT_UID "--uid"
#define SHIM_OPT_GID "--gid"
#define SHIM_OPT_GROUPS "--groups"
#define SHIM_OPT_CWD "--cwd"

#define SHIM_OPT_ROOT "--root"
#define SHIM_OPT_RO_BIND "--ro-bind"
#define SHIM_OPT_ALLOC_DIR "--alloc-dir"
#define SHIM_OPT_VOLUME "--volume"
#define SHIM_OPT_PID_NS "--pid-ns"
#define SHIM_OPT_IPC_NS "--ipc-ns"
#define SHIM_OPT_CAPS "--caps"
#define SHIM_OPT_NO_NEW_PRIVS "--no-new-privs"
#define SHIM_OPT_SECRETS_SIZE "--secrets-size"
#define SHIM_OPT_SECRETS_DIR "--secrets-dir"

/*
 * Exec into a running task (the streamer's exec sessions):
 *   taskscope-shim --exec TASK_PID [--tty] -- COMMAND [ARGS...]
 * with the command's environment, fds 0-2 its stdio, and the fds below.
 * The shim joins the namespaces of TASK_PID that differ from its own
 * (/proc/TASK_PID/ns/KIND) and its root, forks the command (a new pid
 * namespace applies to children only) and stays as its keeper: it writes
 * the command's wait status (an int, one write) to SHIM_EXEC_STATUS_FD and
 * ends the way the command did. The command becomes the task with the
 * shim's own code (process.h) from the saved process spec, sets up its
 * terminal with --tty, and is executed with PROGRAM searched in the PATH of
 * its environment (COMMAND is also its argv[0]). Not found exits 127, any other setup failure 126.
 */
#define SHIM_OPT_EXEC "--exec"
#define SHIM_OPT_TTY "--tty"
#define SHIM_EXEC_REPORT_FD 3 /* we write struct shim_exec_report; EOF: executed */
#define SHIM_EXEC_STATUS_FD 4 /* we write the command's wait status */
#define SHIM_EXEC_SPEC_FD 5   /* the task's saved process spec, read */
#define SHIM_EXEC_PIDFD 6     /* a pidfd of TASK_PID: its namespaces are its own */

/* One report: a single write(2) below PIPE_BUF, so atomic. */
struct shim_exec_report {
    int32_t kind; /* SHIM_REPORT_* */
    int32_t value; /* the command's pid (LEADER) or an errno (FAILED) */
    char step[24]; /* FAILED: what failed, e.g. "setns mnt", "execve ls" */
};
#define SHIM_REPORT_LEADER 1
#define SHIM_REPORT_FAILED 2

#define SHIM_NS_PRIVATE "private"
#define SHIM_NS_HOST "host"

#define SHIM_VOL_RO "ro"
#define SHIM_VOL_RW "rw"
#define SHIM_PROP_PRIVATE "private"
#define SHIM_PROP_HOST_TO_TASK "host-to-task"
#define SHIM_PROP_BIDIRECTIONAL "bidirectional"

/*
 * Starting a task (the manager's launcher and the shim's main):
 *   taskscope-shim --exit-file PATH --uid N --gid N [--groups G1,G2,...]
 *       --cwd DIR [--stdin PATH] [--stdout PATH] [--stderr PATH]
 *       [--release-fifo PATH] [--cgroup-root DIR] [--join-cgroup PROCS_FILE]...
 *       [--netns PATH] [isolation options above] -- PROGRAM ARGV0 [ARGS...]
 *   taskscope-shim --hold   (the placeholder that keeps the shims' scope alive)
 * SHIM_REPORT_PIPE_FD: the report pipe (the shim writes lines, each in one
 * write(2), at most SHIM_REPORT_LINE_MAX bytes); SHIM_GO_PIPE_FD: the go
 * pipe (the manager writes SHIM_GO_BYTE once the task's scope exists, or
 * closes it to abort the start).
 */
#define SHIM_OPT_EXIT_FILE "--exit-file"
#define SHIM_OPT_STDIN "--stdin"
#define SHIM_OPT_STDOUT "--stdout"
#define SHIM_OPT_STDERR "--stderr"
#define SHIM_OPT_RELEASE_FIFO "--release-fifo"
#define SHIM_OPT_CGROUP_ROOT "--cgroup-root"
#define SHIM_OPT_JOIN_CGROUP "--join-cgroup"
#define SHIM_OPT_NETNS "--netns"
#define SHIM_OPT_HOLD "--hold"
#define SHIM_OPT_END "--" /* the task's PROGRAM ARGV0 [ARGS...] follow */

#define SHIM_REPORT_PIPE_FD 3
#define SHIM_GO_PIPE_FD 4
#define SHIM_GO_BYTE 'g'
#define SHIM_REPORT_LINE_MAX 512

/* The report lines, first word: "pid N" (the task exists, stopped before
 * exec); then "started" (it executed its command) or "execfailed ERRNO
 * STEP" (it could not); "error ERRNO STEP" when the shim itself failed
 * before (the task was never forked) or after the pid (nothing ran). */
#define SHIM_LINE_PID "pid"
#define SHIM_LINE_STARTED "started"
#define SHIM_LINE_EXECFAILED "execfailed"
#define SHIM_LINE_ERROR "error"

/* The exit record the shim writes (replaced atomically) once the task has
 * ended: KEY=VALUE lines, in this order. */
#define SHIM_EXIT_CODE "exit_code"             /* exit status, or 128+signal; 127 when exec failed */
#define SHIM_EXIT_SIGNAL "signal"              /* the signal that ended it, or 0 */
#define SHIM_EXIT_OOM_KILLED "oom_killed"      /* 1 when the OOM killer killed a process of the task */
#define SHIM_EXIT_FINISHED_AT_US "finished_at_us" /* CLOCK_REALTIME, microseconds */
#define SHIM_EXIT_EXEC_ERROR "exec_error"      /* errno of a failed exec, or 0 */
#define SHIM_EXIT_EXEC_ERROR_STEP "exec_error_step" /* the setup step that failed */

/* Instead of the exit record, when the go pipe closed before the task ran
 * (its start was aborted): EXIT_FILE SHIM_ABORTED_SUFFIX holding
 * "SHIM_ABORTED_PID=<the shim's pid>\n". */
#define SHIM_ABORTED_SUFFIX ".aborted"
#define SHIM_ABORTED_PID "shim_pid"

#endif
