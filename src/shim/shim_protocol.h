/*
 * The command line of taskscope-shim, shared by the shim (C) and the
 * manager's launcher (C++): one list of option names, not two hand-kept
 * copies. Only macros, so both languages include it as is.
 *
 * Isolation options (all optional; --root switches isolation on; only
 * --cap-bound and --no-new-privs apply without it):
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
 *   --cap-bound HEX       a task without --root (on the host's root): only
 *                         the bounding set is cut to HEX; its user keeps
 *                         what it has within it (root: the set after exec)
 *   --secrets-size BYTES  size of the secrets/ tmpfs
 *   --secrets-dir DIR     bound read-write at secrets/ instead of the tmpfs
 *                         (a scheduler's own secrets dir, e.g. Nomad's)
 *   --device HOST TASK    a device node (a host path under /dev) bound at
 *                         TASK in the root (its scope allows it)
 *   --dns-server IP, --dns-search DOMAIN, --dns-option OPT
 *                         (each repeatable) the root's etc/resolv.conf, made
 *                         of these, bound read-only over the host's
 *   --hosts NAME ADDR     the root's etc/hosts: localhost and ADDR NAME,
 *                         bound read-only over the host's
 *
 * Limits (with or without --root; part of the process spec, so exec'd
 * commands get them too):
 *   --rlimit RES SOFT HARD  setrlimit(RES, ...): RES the RLIMIT_* number,
 *                         SOFT and HARD decimal or SHIM_RLIMIT_INFINITY
 *   --oom-score-adj N     written to /proc/self/oom_score_adj (-1000..1000)
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
#define SHIM_OPT_CAP_BOUND "--cap-bound"
#define SHIM_OPT_DEVICE "--device"
#define SHIM_OPT_DNS_SERVER "--dns-server"
#define SHIM_OPT_DNS_SEARCH "--dns-search"
#define SHIM_OPT_DNS_OPTION "--dns-option"
#define SHIM_OPT_HOSTS "--hosts"
#define SHIM_OPT_RLIMIT "--rlimit"
#define SHIM_RLIMIT_INFINITY "unlimited"
#define SHIM_OPT_OOM_SCORE_ADJ "--oom-score-adj"
/* The range --oom-score-adj takes: the kernel's OOM_SCORE_ADJ_MIN and
 * OOM_SCORE_ADJ_MAX (<linux/oom.h>, which musl's headers lack); the manager
 * checks at compile time that they are spec::kOomScoreAdjMin/Max. */
#define SHIM_OOM_SCORE_ADJ_MIN (-1000)
#define SHIM_OOM_SCORE_ADJ_MAX 1000

/*
 * Exec into a running task (the streamer's exec sessions):
 *   taskscope-shim --exec TASK_PID [--tty] -- COMMAND [ARGS...]
 * with the command's environment, fds 0-2 its stdio, and the fds below.
 * The shim joins the namespaces of TASK_PID that differ from its own
 * (/proc/TASK_PID/ns/KIND) and its root, forks the command (a new pid
 * namespace applies to children only) and stays as its keeper: it writes
 * the command's wait status (an int, one write) to SHIM_EXEC_STATUS_FD and
 * ends the way the command did. The command becomes the task with the
 * shim's own code (identity.h) from the saved process spec, sets up its
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
 * The task's shim (taskscope_shim.c) as the manager's launcher drives it:
 *   taskscope-shim --exit-file PATH --uid N --gid N [--groups G,...] --cwd DIR
 *       [--stdin PATH] [--stdout PATH] [--stderr PATH] [--release-fifo PATH
 *       [--keep-task-zombie] [--forward-stdout PATH] [--forward-stderr PATH]]
 *       [--cgroup-root DIR] [--join-cgroup PROCS_FILE]... [--netns PATH]
 *       [isolation options above] -- PROGRAM ARGV0 [ARGS...]
 *   taskscope-shim --hold   (the placeholder that keeps the shims' scope alive)
 * fd SHIM_TASK_REPORT_FD: report lines, each one write(2) ending in '\n':
 *   "pid N", then "started" or "execfailed ERRNO STEP" (STEP one word);
 *   or "error ERRNO STEP" when the shim's own step failed (no task ran).
 * fd SHIM_TASK_GO_FD: the manager writes SHIM_GO_BYTE once the task is in
 * its scope; EOF or another byte aborts the start (no exit file, only the
 * aborted mark).
 * --keep-task-zombie (no value; only with --release-fifo): the task, once
 * ended, is left unreaped (its exit status read with WNOWAIT) until the
 * release: a zombie keeps its pid and its cgroup, which journald looks up
 * for every line the streamer copies to the journal with the task's pid
 * as its credentials; a reaped pid makes that send fail. The exit file is
 * written at the exit all the same.
 * --forward-stdout/--forward-stderr PATH (only with --release-fifo): where
 * the streamer forwards the task's output from the --stdout/--stderr fifos
 * (a Nomad log fifo: log_journal with stdout_path, issue 59). Opened as the
 * task's own output would be (safe_open.h: a missing file is made) and
 * held until the release: a start with a path the task may not have fails,
 * and the fifo's reader (Nomad's logmon, which reads until every writer
 * has gone, once) never sees the end while the streamer restarts.
 */
#define SHIM_OPT_EXIT_FILE "--exit-file"
#define SHIM_OPT_STDIN "--stdin"
#define SHIM_OPT_STDOUT "--stdout"
#define SHIM_OPT_STDERR "--stderr"
#define SHIM_OPT_RELEASE_FIFO "--release-fifo"
#define SHIM_OPT_KEEP_TASK_ZOMBIE "--keep-task-zombie"
#define SHIM_OPT_FORWARD_STDOUT "--forward-stdout"
#define SHIM_OPT_FORWARD_STDERR "--forward-stderr"
#define SHIM_OPT_CGROUP_ROOT "--cgroup-root"
#define SHIM_OPT_JOIN_CGROUP "--join-cgroup"
#define SHIM_OPT_NETNS "--netns"
#define SHIM_OPT_HOLD "--hold"
#define SHIM_OPT_END "--" /* the task's PROGRAM ARGV0 [ARGS...] follow */

#define SHIM_TASK_REPORT_FD 3
#define SHIM_TASK_GO_FD 4
#define SHIM_GO_BYTE 'g'
#define SHIM_REPORT_LINE_MAX 512 /* the longest report line, '\n' included */

#define SHIM_LINE_PID "pid"
#define SHIM_LINE_STARTED "started"
#define SHIM_LINE_EXECFAILED "execfailed"
#define SHIM_LINE_ERROR "error"

/* The exit file (--exit-file, written atomically, mode 0600): one
 * "key=value" line per key below, in this order. */
#define SHIM_EXIT_CODE "exit_code"           /* 128+signal when killed; 127 when exec failed */
#define SHIM_EXIT_SIGNAL "signal"            /* 0, or the signal that ended the task */
#define SHIM_EXIT_OOM_KILLED "oom_killed"    /* 1 when the kernel's OOM killer ended it */
#define SHIM_EXIT_FINISHED_AT "finished_at_us" /* CLOCK_REALTIME, microseconds */
#define SHIM_EXIT_EXEC_ERROR "exec_error"    /* 0, or the errno of the failed setup step */
#define SHIM_EXIT_EXEC_STEP "exec_error_step" /* that step's name, "" when none */
/* "<exit file>.aborted" holding "shim_pid=N": the start was aborted and the
 * task never ran. */
#define SHIM_ABORTED_SUFFIX ".aborted"
#define SHIM_ABORTED_SHIM_PID "shim_pid"

#endif
