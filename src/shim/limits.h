/*
 * What the task is given besides its identity (issue 47): its rlimits
 * (--rlimit, docker's ulimits) and its oom_score_adj (--oom-score-adj),
 * parsed with the rest of the process spec and applied by become_task
 * (identity.c) first, while the process is still root with every
 * capability: raising a hard limit and lowering oom_score_adj need
 * CAP_SYS_RESOURCE. So the task and every command exec'd into it start
 * with the same limits and score, never the manager's or the streamer's.
 */
#ifndef TASKSCOPE_SHIM_LIMITS_H
#define TASKSCOPE_SHIM_LIMITS_H

#include <stdint.h>

/* RLIMIT_NLIMITS on Linux: one of each at most. */
#define MAX_RLIMITS 16

struct task_rlimit {
    int resource; /* RLIMIT_* */
    uint64_t soft, hard; /* UINT64_MAX: RLIM_INFINITY */
};

struct task_limits {
    struct task_rlimit rlimits[MAX_RLIMITS];
    int nrlimits;
    int have_oom_score_adj;
    int oom_score_adj;
};

/* Takes --rlimit RESOURCE SOFT HARD or --oom-score-adj N from argv[*i]
 * (advancing *i past its values). 1 when taken, 0 when not a limits
 * option, -1 when malformed. */
int limits_parse_arg(struct task_limits *l, int argc, char **argv, int *i);

/* oom_score_adj first (through /proc/self, which is the caller's own in
 * any root the task has), then each rlimit. 0 or an errno, with the
 * failing part's name in *step ("oom-score-adj", "rlimit-nofile"). */
int apply_limits(const struct task_limits *l, const char **step);

#endif
