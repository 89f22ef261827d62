/* A task's rlimits and oom_score_adj (limits.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "limits.h"
#include "shim_protocol.h"
#include "shim_text.h"

/* The step a failure names: one word, as the report line wants it. */
static const char *rlimit_step(int resource)
{
    switch (resource) {
    case RLIMIT_AS: return "rlimit-as";
    case RLIMIT_CORE: return "rlimit-core";
    case RLIMIT_CPU: return "rlimit-cpu";
    case RLIMIT_DATA: return "rlimit-data";
    case RLIMIT_FSIZE: return "rlimit-fsize";
    case RLIMIT_LOCKS: return "rlimit-locks";
    case RLIMIT_MEMLOCK: return "rlimit-memlock";
    case RLIMIT_MSGQUEUE: return "rlimit-msgqueue";
    case RLIMIT_NICE: return "rlimit-nice";
    case RLIMIT_NOFILE: return "rlimit-nofile";
    case RLIMIT_NPROC: return "rlimit-nproc";
    case RLIMIT_RSS: return "rlimit-rss";
    case RLIMIT_RTPRIO: return "rlimit-rtprio";
    case RLIMIT_RTTIME: return "rlimit-rttime";
    case RLIMIT_SIGPENDING: return "rlimit-sigpending";
    case RLIMIT_STACK: return "rlimit-stack";
    }
    return "rlimit";
}

static int parse_limit(const char *s, uint64_t *out)
{
    if (strcmp(s, SHIM_RLIMIT_INFINITY) == 0) {
        *out = UINT64_MAX;
        return 0;
    }
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* SHIM_OOM_SCORE_ADJ_MIN..SHIM_OOM_SCORE_ADJ_MAX ("-1000".."1000"), the
 * kernel's range (shim_protocol.h). */
static int parse_score(const char *s, int *out)
{
    int neg = *s == '-';
    unsigned v;
    if (parse_u32z(s + neg, &v) < 0 || v > (unsigned)(neg ? -SHIM_OOM_SCORE_ADJ_MIN : SHIM_OOM_SCORE_ADJ_MAX))
        return -1;
    *out = neg ? -(int)v : (int)v;
    return 0;
}

int limits_parse_arg(struct task_limits *l, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (strcmp(a, SHIM_OPT_RLIMIT) == 0) {
        unsigned res;
        if (*i + 3 >= argc || l->nrlimits >= MAX_RLIMITS || parse_u32z(argv[*i + 1], &res) < 0 ||
            res >= MAX_RLIMITS)
            return -1;
        struct task_rlimit *r = &l->rlimits[l->nrlimits];
        r->resource = (int)res;
        if (parse_limit(argv[*i + 2], &r->soft) < 0 || parse_limit(argv[*i + 3], &r->hard) < 0 || r->soft > r->hard)
            return -1;
        l->nrlimits++;
        *i += 3;
        return 1;
    }
    if (strcmp(a, SHIM_OPT_OOM_SCORE_ADJ) == 0) {
        if (*i + 1 >= argc || parse_score(argv[*i + 1], &l->oom_score_adj) < 0)
            return -1;
        l->have_oom_score_adj = 1;
        *i += 1;
        return 1;
    }
    return 0;
}

static int write_score(int score)
{
    char m[16];
    struct buf b = { m, 0, sizeof m, 0 };
    if (score < 0) {
        b_str(&b, "-");
        score = -score;
    }
    b_u64(&b, (unsigned)score);
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    int e = write_all(fd, m, b.len) < 0 ? errno : 0;
    close(fd);
    return e;
}

int apply_limits(const struct task_limits *l, const char **step)
{
    if (l->have_oom_score_adj) {
        *step = "oom-score-adj";
        int e = write_score(l->oom_score_adj);
        if (e)
            return e;
    }
    for (int i = 0; i < l->nrlimits; i++) {
        const struct task_rlimit *r = &l->rlimits[i];
        struct rlimit rl;
        rl.rlim_cur = r->soft == UINT64_MAX ? RLIM_INFINITY : (rlim_t)r->soft;
        rl.rlim_max = r->hard == UINT64_MAX ? RLIM_INFINITY : (rlim_t)r->hard;
        *step = rlimit_step(r->resource);
        if (setrlimit(r->resource, &rl) < 0)
            return errno;
    }
    return 0;
}
