/*
 * The process a task runs as, and becoming it (issue 14, "one way to become
 * the task"): the task child (taskscope_shim.c) and every command exec'd
 * into the task (exec.c) parse the same options with shim_parse_opts and
 * take the same identity, capabilities and no_new_privs with become_task.
 * For exec the options come from the task's saved process spec: the
 * identity and isolation part of the task's own shim command line, which
 * the manager wrote once when it started the task.
 */
#ifndef TASKSCOPE_SHIM_PROCESS_H
#define TASKSCOPE_SHIM_PROCESS_H

#include <stddef.h>
#include <sys/types.h>

#include "isolation.h"

/* 256 supplementary groups cost 1 KiB of stack; more is not a sane task. */
#define MAX_GROUPS 256

/* One cgroup.procs file per hierarchy the shims' scope lives in: one on
 * cgroup v2, a dozen at most on v1/hybrid. */
#define MAX_JOIN 16

struct opts {
    char *exit_file; /* writable: cut in place to open its directory */
    const char *cwd;
    const char *stdin_path;
    const char *stdout_path;
    const char *stderr_path;
    /* --release-fifo: the --stdout and --stderr fifos are held open from
     * before the fork until a byte (or a writer's close) arrives here */
    const char *release_fifo;
    const char *cgroup_root;
    const char *netns; /* --netns: a network namespace file to join first */
    const char *groups; /* raw comma-separated list, NULL = no groups */
    const char *join[MAX_JOIN]; /* cgroup.procs files we move ourselves into */
    int njoin;
    uid_t uid;
    gid_t gid;
    int have_uid;
    int have_gid;
    const char *prog;
    char **argv;
    struct iso_opts iso; /* isolation (isolation.h); iso.root NULL: none */
};

/* Parses options from argv[1] up to "--" (or the end); *next is the index
 * after it. -1 when one is malformed or --uid, --gid or --cwd is missing. */
int shim_parse_opts(int argc, char **argv, struct opts *o, int *next);

/* Takes the task's capabilities (caps.c, crun's order), groups, gid, uid
 * and no_new_privs. Returns 0 or an errno, with the failing step's name. */
int become_task(const struct opts *o, const gid_t *groups, int ngroups, const char **step);

/* Default dispositions and an empty mask, as a freshly exec'd task expects. */
int reset_signals(const char **step);

int parse_u32z(const char *s, unsigned *out);
int parse_groups(const char *list, gid_t *out, int *n);
int write_all(int fd, const char *p, size_t n);
/* Closes every fd >= first except keep (-1: none). */
void close_from(int first, int keep);

/* exec.c: taskscope-shim --exec (shim_protocol.h). */
int shim_exec_main(int argc, char **argv, char **envp);

#endif
