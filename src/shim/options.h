/*
 * The shim's command line (its names are in shim_protocol.h, shared with
 * the manager), parsed into one struct. The task's own shim and every
 * command exec'd into the task (exec.c, from the task's saved process
 * spec) parse the same identity and isolation options with the same code.
 */
#ifndef TASKSCOPE_SHIM_OPTIONS_H
#define TASKSCOPE_SHIM_OPTIONS_H

#include <stddef.h>
#include <sys/types.h>

#include "isolation.h"
#include "limits.h"

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
    /* --keep-task-zombie (needs --release-fifo): the ended task is reaped
     * only after the release (task_zombie.h) */
    int keep_task_zombie;
    /* --forward-stdout/--forward-stderr (need --release-fifo): held with
     * the fifos (log_hold.h) */
    const char *forward_stdout;
    const char *forward_stderr;
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
    struct task_limits limits; /* rlimits and oom_score_adj (limits.h) */
};

/* Parses options from argv[1] up to "--" (or the end); *next is the index
 * after it. -1 when one is malformed or --uid, --gid or --cwd is missing. */
int shim_parse_opts(int argc, char **argv, struct opts *o, int *next);

/* The task's whole command line: the options, then "--", PROGRAM and
 * ARGV0 (both required: argv[0] is the caller's choice), and an exit
 * file. -1 when anything is missing or malformed, or --keep-task-zombie
 * comes without --release-fifo (nothing would ever reap the task). */
int shim_parse_command(int argc, char **argv, struct opts *o);

/* The task's saved process spec (the manager writes its words with a NUL
 * after each; exec.c reads it back): text[0..len) as the words of argv
 * (argv[0] "spec", a NULL after the last; room for max_words + 2
 * entries), then shim_parse_opts over all of them. text[len] must be
 * writable: it becomes a NUL. 0, E2BIG when there are more than max_words
 * words, EINVAL when shim_parse_opts refuses them or stops before the end. */
int shim_parse_spec(char *text, size_t len, char **argv, int max_words, struct opts *o);

/* The --groups list as numbers; -1 when malformed or longer than MAX_GROUPS. */
int parse_groups(const char *list, gid_t *out, int *n);

/* For the journal when the command line is wrong. */
#define SHIM_USAGE                                                                                  \
    "usage: taskscope-shim --exit-file PATH --uid N --gid N "                                       \
    "[--groups G,...] --cwd DIR [--stdin P] [--stdout P] [--stderr P] "                             \
    "[--release-fifo P [--keep-task-zombie]] [--cgroup-root DIR] [--join-cgroup FILE]... [--netns PATH] [isolation options] " \
    "[--rlimit RES SOFT HARD]... [--oom-score-adj N] "                                              \
    "-- PROGRAM ARGV0 [ARGS...]"

#endif
