/*
 * taskscope-shim: the per-task parent process.
 *
 * The manager must be able to die or restart while a task runs without
 * losing the task's exit status. So the manager never parents a task: it
 * spawns this shim, which forks the task, stays its parent outside the
 * task's cgroup, reaps it and persists the exit record atomically.
 *
 * One shim lives per running task, so memory is the design constraint: the
 * program is C11, linked statically against musl, never calls malloc and
 * never uses stdio. All buffers live on the stack and are sized so that only
 * a few stack pages are ever touched.
 *
 * Protocol (the manager side implements exactly this):
 *   taskscope-shim --exit-file PATH --uid N --gid N [--groups G1,G2,...]
 *       --cwd DIR [--stdin PATH] [--stdout PATH] [--stderr PATH]
 *       [--release-fifo PATH] [--cgroup-root DIR] [--join-cgroup PROCS_FILE]...
 *       [--netns PATH] [isolation options of shim_protocol.h]
 *       -- PROGRAM ARGV0 [ARGS...]
 *   taskscope-shim --hold   (the placeholder that keeps the shims' scope alive)
 *   fd 3: report pipe (we write), fd 4: go pipe (we read).
 *   Reports on fd 3: "pid N", then "started" or "execfailed ERRNO STEP";
 *   or "error ERRNO STEP" when the task could not be forked at all.
 *   With --release-fifo the shim holds the --stdout and --stderr fifos
 *   open and, once a task that ran has its exit record, stays until the
 *   release fifo is written to (the streamer has drained both).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* renameat() only; no FILE is ever used */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "isolation.h"
#include "process.h"
#include "shim_protocol.h"
#include "shim_netns.h"
#include "shim_text.h"

#define REPORT_FD 3
#define GO_FD 4

/* ---- tiny formatting helpers (no stdio: its buffers cost memory) ---- */

struct buf {
    char *p;
    size_t len;
    size_t cap;
    int overflow;
};

static void b_str(struct buf *b, const char *s)
{
    while (*s) {
        if (b->len + 1 >= b->cap) { /* keep room for a terminating NUL */
            b->overflow = 1;
            return;
        }
        b->p[b->len++] = *s++;
    }
    b->p[b->len] = '\0';
}

static void b_u64(struct buf *b, unsigned long long v)
{
    char s[24];
    shim_format_u64(s, v);
    b_str(b, s);
}

static void b_i64(struct buf *b, long long v)
{
    if (v < 0) {
        b_str(b, "-");
        b_u64(b, (unsigned long long)(-(v + 1)) + 1);
    } else {
        b_u64(b, (unsigned long long)v);
    }
}

int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void say(int fd, const char *a, const char *b)
{
    char m[256];
    struct buf o = { m, 0, sizeof m, 0 };
    b_str(&o, a);
    b_str(&o, b);
    b_str(&o, "\n");
    (void)write_all(fd, m, o.len);
}

/* Parse a decimal number without strtoul's locale/errno baggage. */
static int parse_u32(const char *s, const char *end, unsigned *out)
{
    unsigned long long v = 0;
    if (s == end)
        return -1;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (unsigned)(*s - '0');
        if (v > 0xffffffffULL)
            return -1;
    }
    *out = (unsigned)v;
    return 0;
}

int parse_u32z(const char *s, unsigned *out)
{
    return parse_u32(s, s + strlen(s), out);
}

/* The manager could not have started us properly: tell it on the report
 * pipe if we can, and on stderr for whoever reads the journal. */
static void fatal(int err, const char *step)
{
    char m[96];
    struct buf o = { m, 0, sizeof m, 0 };
    b_str(&o, "error ");
    b_u64(&o, (unsigned)err);
    b_str(&o, " ");
    b_str(&o, step);
    b_str(&o, "\n");
    (void)write_all(REPORT_FD, m, o.len);
    say(2, "taskscope-shim: ", m);
}

int parse_groups(const char *list, gid_t *out, int *n)
{
    *n = 0;
    if (!list || !*list)
        return 0;
    const char *s = list;
    for (;;) {
        const char *e = s;
        while (*e && *e != ',')
            e++;
        unsigned v;
        if (*n >= MAX_GROUPS || parse_u32(s, e, &v) < 0)
            return -1;
        out[(*n)++] = (gid_t)v;
        if (!*e)
            return 0;
        s = e + 1;
    }
}

int shim_parse_opts(int argc, char **argv, struct opts *o, int *next)
{
    memset(o, 0, sizeof *o);
    o->cgroup_root = "/sys/fs/cgroup";
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        int taken = iso_parse_arg(&o->iso, argc, argv, &i);
        if (taken < 0)
            return -1;
        if (taken)
            continue;
        if (i + 1 >= argc)
            return -1;
        char *v = argv[++i];
        unsigned n;
        if (strcmp(a, "--exit-file") == 0) o->exit_file = v;
        else if (strcmp(a, SHIM_OPT_CWD) == 0) o->cwd = v;
        else if (strcmp(a, "--stdin") == 0) o->stdin_path = v;
        else if (strcmp(a, "--stdout") == 0) o->stdout_path = v;
        else if (strcmp(a, "--stderr") == 0) o->stderr_path = v;
        else if (strcmp(a, "--release-fifo") == 0) o->release_fifo = v;
        else if (strcmp(a, "--cgroup-root") == 0) o->cgroup_root = v;
        else if (strcmp(a, SHIM_OPT_GROUPS) == 0) o->groups = v;
        else if (strcmp(a, "--netns") == 0) o->netns = v;
        else if (strcmp(a, "--join-cgroup") == 0) {
            if (o->njoin >= MAX_JOIN) return -1;
            o->join[o->njoin++] = v;
        }
        else if (strcmp(a, SHIM_OPT_UID) == 0) {
            if (parse_u32z(v, &n) < 0) return -1;
            o->uid = (uid_t)n;
            o->have_uid = 1;
        } else if (strcmp(a, SHIM_OPT_GID) == 0) {
            if (parse_u32z(v, &n) < 0) return -1;
            o->gid = (gid_t)n;
            o->have_gid = 1;
        } else {
            return -1;
        }
    }
    o->iso.uid = o->uid;
    o->iso.gid = o->gid;
    o->iso.net_private = o->netns != NULL;
    *next = i;
    return !o->cwd || !o->have_uid || !o->have_gid ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    int i;
    if (shim_parse_opts(argc, argv, o, &i) < 0)
        return -1;
/* PROGRAM and ARGV0 are both required: argv[0] is the caller's choice. */
    if (i + 1 >= argc || !o->exit_file || !*o->exit_file)
        return -1;
    o->prog = argv[i];
    o->argv = &argv[i + 1];
    return 0;
}

/* ---- the task child, between fork and execve ---- */

static _Noreturn void child_fail(int errfd, int err, const char *step)
{
    char m[64];
    struct buf o = { m, 0, sizeof m, 0 };
    b_u64(&o, (unsigned)err);
    b_str(&o, " ");
    b_str(&o, step);
    (void)write_all(errfd, m, o.len);
    _exit(127);
}

static int open_output(const char *path)
{
    struct stat st;
    /* A fifo to the streamer is opened read-write: the open never waits
     * for a reader, and while no streamer reads (it restarts) the task's
     * writes block once the pipe is full instead of raising SIGPIPE. */
    if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
        return open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
    /* O_APPEND: log files are shared with rotation/other writers. */
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
}

static int close_fds_from_proc(int first, int keep)
{
    int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    char d[1024];
    for (;;) {
        long n = syscall(SYS_getdents64, dfd, d, sizeof d);
        if (n < 0) {
            close(dfd);
            return -1;
        }
        if (n == 0)
            break;
        for (long off = 0; off < n;) {
            /* struct linux_dirent64: ino(8) off(8) reclen(2) type(1) name */
            unsigned short reclen;
            memcpy(&reclen, d + off + 16, sizeof reclen);
            const char *name = d + off + 19;
            unsigned fd;
            if (parse_u32z(name, &fd) == 0 && (int)fd >= first && (int)fd != keep &&
                (int)fd != dfd)
                close((int)fd);
            off += reclen;
        }
    }
    close(dfd);
    return 0;
}

/* Close every fd >= first except keep (-1: none). */
void close_from(int first, int keep)
{
    if (keep < first) {
        if (syscall(SYS_close_range, (unsigned)first, ~0u, 0u) == 0)
            return;
    } else if ((keep == first ||
                syscall(SYS_close_range, (unsigned)first, (unsigned)keep - 1, 0u) == 0) &&
               syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) == 0) {
        return;
    }
    if (close_fds_from_proc(first, keep) == 0)
        return;
    struct rlimit rl;
    long max = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (long)rl.rlim_cur < max)
        max = (long)rl.rlim_cur;
    for (long fd = first; fd < max; fd++)
        if (fd != keep)
            close((int)fd);
}

/* ---- becoming the task: shared by the task child and exec (process.h) ---- */

int become_task(const struct opts *o, const gid_t *groups, int ngroups, const char **step)
{
    int e;
    if ((e = caps_before_ids(&o->iso, step)))
        return e;
    /* The output files and fifos belong to root: the caller opened them
     * first; the working directory is entered after this, as the task's
     * user (so a directory it may not enter is refused). */
    *step = "setgroups";
    if (geteuid() == 0 && setgroups((size_t)ngroups, groups) < 0)
        return errno;
    *step = "setgid";
    if ((getgid() != o->gid || getegid() != o->gid) && setgid(o->gid) < 0)
        return errno;
    *step = "setuid";
    if ((getuid() != o->uid || geteuid() != o->uid) && setuid(o->uid) < 0)
        return errno;
    return caps_after_ids(&o->iso, o->uid, step);
}

int reset_signals(const char **step)
{
    /* The shim ignores SIGTERM & co. and blocks SIGCHLD (the streamer
     * blocks everything until exec); ignored dispositions and the mask
     * survive execve, so undo them. Raw rt_sigaction: musl's sigaction
     * refuses its reserved signals (32-34), which a parent may have left
     * ignored (seen under dpkg-buildpackage). */
    struct {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        unsigned long long mask;
    } dfl = {SIG_DFL, 0, NULL, 0};
    for (int s = 1; s <= 64; s++)
        if (s != SIGKILL && s != SIGSTOP)
            (void)syscall(SYS_rt_sigaction, s, &dfl, NULL, sizeof dfl.mask);
    /* The raw call: libc wrappers may keep their own reserved signals
     * (32, 33) blocked when the shim inherited them blocked. */
    unsigned long long none = 0;
    *step = "sigmask";
    return syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof none) < 0 ? errno : 0;
}

static _Noreturn void run_child(const struct opts *o, const gid_t *groups,
                                int ngroups, int release_rd, int errfd,
                                char **envp)
{
    /* The allocation's network first: every later step and the task's
     * first instruction run inside it. */
    int nerr = shim_join_netns(o->netns);
    if (nerr)
        child_fail(errfd, nerr, "setns");

    /* Stay stopped until the manager has put our PID into the task's scope:
     * not one instruction of the task may run outside its limits. EOF means
     * the start was aborted (or the shim died): leave without exec. */
    char c;
    ssize_t n;
    do
        n = read(release_rd, &c, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1 || c != 'r')
        _exit(127);
    close(release_rd);

    /* The shim made sure fds 0-2 are open, so these land on fds >= 3 and
     * dup2 below always clears their CLOEXEC flag on the copy. */
    int in = open(o->stdin_path ? o->stdin_path : "/dev/null",
                  O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (in < 0)
        child_fail(errfd, errno, "stdin");
    int out = -1, err = -1;
    if (o->stdout_path && (out = open_output(o->stdout_path)) < 0)
        child_fail(errfd, errno, "stdout");
    if (o->stderr_path && (err = open_output(o->stderr_path)) < 0)
        child_fail(errfd, errno, "stderr");
    if (dup2(in, 0) < 0)
        child_fail(errfd, errno, "stdin");
    if (out >= 0 && dup2(out, 1) < 0)
        child_fail(errfd, errno, "stdout");
    if (err >= 0 && dup2(err, 2) < 0)
        child_fail(errfd, errno, "stderr");

    /* Isolation after the output is open (the log fifos are host paths)
     * and before the identity change (mounts need root). */
    const char *step = "";
    int e;
    if (o->iso.root && ((e = iso_unshare(&o->iso, &step)) ||
                        (e = iso_enter_root(&o->iso, &step))))
        child_fail(errfd, e, step);
    if ((e = become_task(o, groups, ngroups, &step)))
        child_fail(errfd, e, step);
    if (chdir(o->cwd) < 0)
        child_fail(errfd, errno, "chdir");

    /* Keep the error pipe: it is CLOEXEC, so a successful execve closes it. */
    close_from(3, errfd);

    if ((e = reset_signals(&step)))
        child_fail(errfd, e, step);

    execve(o->prog, o->argv, envp);
    child_fail(errfd, errno, "execve");
}

/* ---- OOM watch ---- */

struct oom {
    int fd;      /* memory.events (v2) or memory.oom_control (v1) */
    int evfd;    /* v1 only: eventfd registered through cgroup.event_control */
    long long initial;
    long long max;
    /* v1: the kernel signalled the eventfd while the cgroup still existed.
     * It does so when an OOM starts, before the victim is killed and before
     * oom_kill counts it; by the time the task's exit is seen systemd may
     * have removed the cgroup, and the counter with it. */
    int notified;
};

/* Returns the oom_kill counter, or -1. */
static long long oom_read(int fd)
{
    char d[512];
    ssize_t n;
    do
        n = pread(fd, d, sizeof d - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return -1;
    d[n] = '\0';
    /* "oom_kill N" — distinct from oom_kill_disable and oom_group_kill. */
    for (char *l = d; l && *l;) {
        char *nl = strchr(l, '\n');
        if (strncmp(l, "oom_kill ", 9) == 0) {
            char *e = nl ? nl : l + strlen(l);
            unsigned long long v = 0;
            const char *p = l + 9;
            if (p == e)
                return -1;
            for (; p < e; p++) {
                if (*p < '0' || *p > '9')
                    return -1;
                v = v * 10 + (unsigned)(*p - '0');
            }
            return (long long)v;
        }
        l = nl ? nl + 1 : NULL;
    }
    return -1;
}

static void oom_close(struct oom *w)
{
    if (w->fd >= 0)
        close(w->fd);
    if (w->evfd >= 0)
        close(w->evfd);
    w->fd = w->evfd = -1;
}

/* Re-read after a wakeup; once the cgroup is gone kernfs keeps reporting
 * POLLERR, so stop watching instead of spinning. */
static void oom_refresh(struct oom *w)
{
    uint64_t cnt = 0;
    if (w->evfd >= 0 && read(w->evfd, &cnt, sizeof cnt) != (ssize_t)sizeof cnt)
        cnt = 0;
    long long v = oom_read(w->fd);
    if (v < 0) { /* the cgroup is gone: its removal also signals the eventfd */
        oom_close(w);
        return;
    }
    if (cnt > 0)
        w->notified = 1;
    if (v > w->max)
        w->max = v;
}

/* Find the task's memory cgroup from /proc/<pid>/cgroup. On hybrid hosts the
 * memory controller sits on a v1 hierarchy even when a 0:: line exists, so a
 * v1 memory line wins. Leaves the path, without its leading '/', at the start
 * of d as a NUL-terminated string (d is both the read buffer and the result,
 * to keep the stack at one page). Returns 1 for v1, 2 for v2, -1 when none. */
static int task_cgroup(pid_t pid, char *d, size_t cap)
{
    struct buf b = { d, 0, cap, 0 };
    b_str(&b, "/proc/");
    b_u64(&b, (unsigned long long)pid);
    b_str(&b, "/cgroup");
    int fd = open(d, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, d + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        if (len == cap - 1)
            break;
    }
    close(fd);
    d[len] = '\0';

    char *v2 = NULL, *v2e = NULL, *v1 = NULL, *v1e = NULL;
    for (char *l = d; l && *l;) {
        char *nl = strchr(l, '\n');
        char *e = nl ? nl : l + strlen(l);
        char *c1 = memchr(l, ':', (size_t)(e - l));
        char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
        if (c2) {
            if (c1 - l == 1 && l[0] == '0' && c2 == c1 + 1) {
                v2 = c2 + 1;
                v2e = e;
            } else {
                /* controllers are a comma list: look for the word memory */
                for (const char *s = c1 + 1; s < c2;) {
                    const char *t = s;
                    while (t < c2 && *t != ',')
                        t++;
                    if (t - s == 6 && memcmp(s, "memory", 6) == 0) {
                        v1 = c2 + 1;
                        v1e = e;
                    }
                    s = t + 1;
                }
            }
        }
        l = nl ? nl + 1 : NULL;
    }
    char *p = v1 ? v1 : v2, *pe = v1 ? v1e : v2e;
    if (!p)
        return -1;
    while (p < pe && *p == '/')
        p++;
    memmove(d, p, (size_t)(pe - p));
    d[pe - p] = '\0';
    return v1 ? 1 : 2;
}

/* Opens "<cg>/<name>" under dirfd, cg being relative ("" for the root). */
static int open_in_cgroup(int dirfd, char *cg, size_t cap, const char *name,
                          int flags)
{
    size_t l = strlen(cg);
    struct buf b = { cg, l, cap, 0 };
    b_str(&b, *cg ? "/" : "");
    b_str(&b, name);
    int fd = b.overflow ? (errno = ENAMETOOLONG, -1)
                        : openat(dirfd, cg, flags | O_CLOEXEC);
    cg[l] = '\0';
    return fd;
}

static void oom_open(struct oom *w, const char *root, pid_t pid)
{
    w->fd = w->evfd = -1;
    w->initial = w->max = 0;
    w->notified = 0;

    char cg[4096];
    int ver = task_cgroup(pid, cg, sizeof cg);
    if (ver < 0)
        return;
    int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return;
    int dirfd = rootfd;
    if (ver == 1) {
        dirfd = openat(rootfd, "memory", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(rootfd);
        if (dirfd < 0)
            return;
    }
    w->fd = open_in_cgroup(dirfd, cg, sizeof cg,
                           ver == 1 ? "memory.oom_control" : "memory.events",
                           O_RDONLY);
    long long v = w->fd >= 0 ? oom_read(w->fd) : -1;
    if (v < 0) { /* no memory controller; v1 before 4.13 has no oom_kill */
        oom_close(w);
        close(dirfd);
        return;
    }
    w->initial = w->max = v;
    if (ver == 2) { /* kernfs signals changes of memory.events with POLLPRI */
        close(dirfd);
        return;
    }

    /* v1 files do not poll; the kernel notifies OOM through an eventfd
     * registered as "<eventfd> <oom_control fd>" in cgroup.event_control.
     * Without it we still read the counter once at the end. */
    int ec = open_in_cgroup(dirfd, cg, sizeof cg, "cgroup.event_control",
                            O_WRONLY);
    close(dirfd);
    if (ec < 0)
        return;
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (efd >= 0) {
        char m[48];
        struct buf r = { m, 0, sizeof m, 0 };
        b_u64(&r, (unsigned)efd);
        b_str(&r, " ");
        b_u64(&r, (unsigned)w->fd);
        if (write_all(ec, m, r.len) == 0)
            w->evfd = efd;
        else
            close(efd);
    }
    close(ec);
}

/* ---- exit record ---- */

static int write_exit_file(char *path, int status, int have_status,
                           int oom_killed, int exec_err, const char *exec_step)
{
    int code = 0, sig = 0;
    if (have_status) {
        if (WIFSIGNALED(status)) {
            sig = WTERMSIG(status);
            code = 128 + sig;
        } else {
            code = WEXITSTATUS(status);
        }
    }
    if (exec_err)
        code = 127;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long us = (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;

    char c[256];
    struct buf o = { c, 0, sizeof c, 0 };
    b_str(&o, "exit_code=");
    b_i64(&o, code);
    b_str(&o, "\nsignal=");
    b_i64(&o, sig);
    b_str(&o, "\noom_killed=");
    b_i64(&o, oom_killed);
    b_str(&o, "\nfinished_at_us=");
    b_i64(&o, us);
    b_str(&o, "\nexec_error=");
    b_i64(&o, exec_err);
    b_str(&o, "\nexec_error_step=");
    b_str(&o, exec_step);
    b_str(&o, "\n");

    /* Work relative to the directory so that no PATH_MAX copy of the path
     * is needed; path is our own argv string, cut at the slash for a moment. */
    char *slash = strrchr(path, '/');
    const char *base = path;
    int dfd;
    if (slash) {
        char save = slash[1];
        base = slash + 1;
        slash[1] = '\0'; /* keep the slash: "/x" has the directory "/" */
        dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        slash[1] = save;
    } else {
        dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    if (dfd < 0)
        return -1;
    char tmp[NAME_MAX + 8];
    struct buf t = { tmp, 0, sizeof tmp, 0 };
    b_str(&t, base);
    b_str(&t, ".tmp");
    if (t.overflow || o.overflow || !*base) {
        close(dfd);
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                    0600); /* root's alone, like every record of the manager */
    int e = 0;
    if (fd < 0) {
        e = errno;
    } else {
        if (write_all(fd, c, o.len) < 0 || fsync(fd) < 0)
            e = errno;
        if (close(fd) < 0 && !e)
            e = errno;
        if (!e && renameat(dfd, tmp, dfd, base) < 0)
            e = errno;
        if (e)
            unlinkat(dfd, tmp, 0);
    }
    /* The rename is only durable once the directory entry is on disk. */
    if (!e && fsync(dfd) < 0)
        e = errno;
    close(dfd);
    errno = e;
    return e ? -1 : 0;
}

/* An aborted start leaves no exit file: the task never ran. This mark,
 * "<exit file>.aborted" holding our pid, tells a manager that recovers the
 * task's record (its predecessor died mid-start) that the task never ran,
 * rather than that its shim was killed. Best effort: without it the task
 * is reported lost, as before. */
static void write_aborted_mark(const char *exit_file)
{
    char p[PATH_MAX];
    struct buf b = { p, 0, sizeof p, 0 };
    b_str(&b, exit_file);
    b_str(&b, ".aborted");
    char c[32];
    struct buf o = { c, 0, sizeof c, 0 };
    b_str(&o, "shim_pid=");
    b_i64(&o, (long long)getpid());
    b_str(&o, "\n");
    if (b.overflow || o.overflow)
        return;
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    (void)write_all(fd, c, o.len);
    close(fd);
}

/* ---- main ---- */

static void ensure_std_fds(void)
{
    /* Fds the task inherits or that we dup2 over must not alias our own
     * pipes, so fill any gap in 0-2 with /dev/null. */
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        int n = open("/dev/null", O_RDWR);
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}

/* ---- the task's birth cgroup ----
 * The shim moves itself into taskscope-shims.scope only once the task's pid
 * is reported (a move is slow: see join_cgroups' caller). Forked before
 * that, a plain fork would make the task, held before exec, a process of
 * the manager's service until systemd moves it: counted in its TasksMax,
 * shown under it, taken by a `systemctl kill` of it. On cgroup v2, clone3's
 * CLONE_INTO_CGROUP makes it in the shims' scope directly, which is no move
 * at all. (What the fork allocates, the task's kernel stack and task
 * struct, is still charged to the forking shim's memory cgroup, the
 * manager's at that moment, and stays there: ~36 KiB per task measured.) */
#ifndef SYS_clone3
#define SYS_clone3 435 /* the same number on every architecture */
#endif
#define SHIM_CLONE_INTO_CGROUP 0x200000000ULL
#define SHIM_CGROUP2_MAGIC 0x63677270

struct shim_clone_args { /* the kernel's struct clone_args, version 2 */
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
        stack_size, tls, set_tid, set_tid_size, cgroup;
};

/* The directory of the one cgroup.procs file to join when it is on cgroup
 * v2 (-1 otherwise: v1 and hybrid join several hierarchies, and a clone can
 * be made into one cgroup only). */
static int birth_cgroup(const struct opts *o)
{
    if (o->njoin != 1)
        return -1;
    char dir[PATH_MAX];
    const char *slash = strrchr(o->join[0], '/');
    size_t len = slash ? (size_t)(slash - o->join[0]) : 0;
    if (len == 0 || len >= sizeof dir)
        return -1;
    memcpy(dir, o->join[0], len);
    dir[len] = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct statfs fs;
    if (fd >= 0 && (fstatfs(fd, &fs) < 0 || fs.f_type != SHIM_CGROUP2_MAGIC)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* fork(), or clone with the isolation's namespace flags, made in `cgroup`
 * when it is >= 0 (-1 if the kernel cannot or will not: nothing made). */
static pid_t clone_task(unsigned long cflags, int cgroup)
{
    if (cgroup >= 0) {
        struct shim_clone_args a;
        memset(&a, 0, sizeof a);
        a.flags = cflags | SHIM_CLONE_INTO_CGROUP;
        a.exit_signal = SIGCHLD;
        a.cgroup = (uint64_t)cgroup;
        return (pid_t)syscall(SYS_clone3, &a, sizeof a);
    }
    return cflags ? (pid_t)syscall(SYS_clone, SIGCHLD | cflags, 0, 0, 0, 0) : fork();
}

/* Moves this process into each given cgroup (writing 0 to a cgroup.procs
 * file moves the writer). The manager names the cgroups of the shims' own
 * scope: a shim must not live in the manager's service cgroup, where any
 * `systemctl kill`, stop or OOM kill of the manager's unit would take every
 * shim and with it every exit code, nor in its task's scope (seed 001: the
 * supervisor never joins the task's cgroup). On cgroup v2 done once the
 * task's pid is reported, the task having been made here already
 * (birth_cgroup); elsewhere before the fork, so that the task, held before
 * exec until systemd moves it into its scope, is never in the manager's
 * cgroup. */
static int join_cgroups(const struct opts *o)
{
    for (int i = 0; i < o->njoin; i++) {
        int fd = open(o->join[i], O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        int rc = write_all(fd, "0", 1);
        int err = errno;
        close(fd);
        if (rc < 0)
            return -err;
    }
    return 0;
}

/* ---- the log holds ----
 * A pipe's contents live only while someone holds one of its ends. The
 * streamer reads the task's log fifos, but it restarts, and the task may
 * write and end meanwhile; the shim outlives both daemons, so it holds both
 * fifos from before the task exists until the streamer says it has drained
 * them: one byte, or a writer's close, on the release fifo. Held here they
 * cost neither daemon a descriptor nor systemd's fd stores an entry (whose
 * every addition is compared with every stored fd). */
struct log_hold {
    int out, err, release;
};

static int hold_logs(const struct opts *o, struct log_hold *h)
{
    h->out = h->err = h->release = -1;
    if (!o->release_fifo)
        return 0;
    /* Read-write: the open never waits for the other side. */
    if (o->stdout_path && (h->out = open(o->stdout_path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0)
        return -1;
    if (o->stderr_path && (h->err = open(o->stderr_path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0)
        return -1;
    /* Read-only and non-blocking: opens at once, and reports no hangup
     * until a writer has come and gone. */
    h->release = open(o->release_fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    return h->release < 0 ? -1 : 0;
}

/* After the exit record: wait for the release, reaping what the task left
 * behind meanwhile (we are its subreaper). A release fifo unlinked behind
 * our back can never be written to: looked at once a minute, never sooner,
 * since thousands of shims may wait at once while a streamer is down. */
static void linger_until_released(struct log_hold *h, int sfd)
{
    while (h->release >= 0) {
        struct pollfd p[2] = { { h->release, POLLIN, 0 }, { sfd, POLLIN, 0 } };
        int r = poll(p, 2, 60 * 1000);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (r == 0) {
            struct stat st;
            if (fstat(h->release, &st) < 0 || st.st_nlink == 0)
                break;
            continue;
        }
        if (p[1].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) > 0)
                ;
            while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
        }
        if (p[0].revents)
            break;
    }
    if (h->out >= 0)
        close(h->out);
    if (h->err >= 0)
        close(h->err);
    if (h->release >= 0)
        close(h->release);
}

/* The placeholder of the shims' scope: systemd stops a scope the moment it
 * is empty, so one process that does nothing keeps it while no task runs. */
static _Noreturn void hold(void)
{
    close_from(3, -1);
    (void)setsid();
    for (;;)
        pause();
}

int main(int argc, char **argv, char **envp)
{
    if (argc == 2 && strcmp(argv[1], "--hold") == 0)
        hold();
    if (argc >= 2 && strcmp(argv[1], SHIM_OPT_EXEC) == 0)
        return shim_exec_main(argc, argv, envp);
    ensure_std_fds();
    if (fcntl(REPORT_FD, F_GETFD) < 0 || fcntl(GO_FD, F_GETFD) < 0) {
        say(2, "taskscope-shim: ", "fds 3 (report) and 4 (go) must be open");
        return 2;
    }
    (void)fcntl(REPORT_FD, F_SETFD, FD_CLOEXEC);
    (void)fcntl(GO_FD, F_SETFD, FD_CLOEXEC);
    /* We outlive the manager: whatever else it leaked to us (a bus socket,
     * a log pipe) must not be held open for the lifetime of the task. */
    close_from(GO_FD + 1, -1);

    struct opts o;
    gid_t groups[MAX_GROUPS];
    int ngroups = 0;
    if (parse_args(argc, argv, &o) < 0 || parse_groups(o.groups, groups, &ngroups) < 0) {
        fatal(EINVAL, "args");
        say(2, "usage: taskscope-shim --exit-file PATH --uid N --gid N "
               "[--groups G,...] --cwd DIR [--stdin P] [--stdout P] [--stderr P] "
               "[--release-fifo P] [--cgroup-root DIR] [--join-cgroup FILE]... [--netns PATH] [isolation options] "
               "-- PROGRAM ARGV0 [ARGS...]", "");
        return 2;
    }
    /* Own session: the manager's terminal/process group signals and its
     * death must not reach us (KillMode=process keeps us alive). */
    (void)setsid();
    /* The task's daemonized orphans come back to us rather than PID 1, so
     * nothing of the task escapes being reaped by the supervisor. */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

    /* The manager kills tasks through systemd, never the shim; a writer
     * whose manager went away must not die of SIGPIPE either. */
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, NULL);
    sigaction(SIGHUP, &ign, NULL);
    sigaction(SIGTERM, &ign, NULL);
    sigaction(SIGINT, &ign, NULL);

    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0) {
        fatal(errno, "sigmask");
        return 1;
    }
    int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        fatal(errno, "signalfd");
        return 1;
    }
    int joined = 0; /* moved into the shims' scope yet */
    struct log_hold logs;
    if (hold_logs(&o, &logs) < 0) {
        fatal(errno, "hold-logs");
        return 1;
    }
    int release[2], errp[2];
    if (pipe2(release, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
        fatal(errno, "pipe");
        return 1;
    }

    /* A raw clone: with CLONE_NEWPID the task is pid 1 of its own pid
     * namespace (no init of ours in between: one process less per task,
     * and the shim outside stays the one parent that reaps and records the
     * exit; when pid 1 ends the kernel ends the rest of the namespace).
     * Without flags this is fork(); the child only makes raw syscalls. */
    unsigned long cflags = iso_clone_flags(&o.iso);
    int birth = birth_cgroup(&o);
    pid_t pid = -1;
    if (birth >= 0) {
        pid = clone_task(cflags, birth);
        close(birth);
    }
    if (pid < 0) {
        /* No clone into the shims' scope (cgroup v1 or hybrid, a kernel
         * before 5.7, or one that refused): the shim moves first, as it
         * always did, so that the task is made there; the start then
         * waits for that move. */
        if (o.njoin) {
            int jerr = join_cgroups(&o);
            if (jerr < 0) {
                fatal(-jerr, "join-cgroup");
                return 1;
            }
            joined = 1;
        }
        pid = clone_task(cflags, -1);
    }
    if (pid < 0) {
        fatal(errno, "fork");
        return 1;
    }
    if (pid == 0) {
        /* Drop the manager's pipes now: if the shim dies, the manager must
         * see EOF even while this child still waits for release. */
        close(REPORT_FD);
        close(GO_FD);
        close(sfd);
        close(release[1]);
        close(errp[0]);
        run_child(&o, groups, ngroups, release[0], errp[1], envp);
    }
    close(release[0]);
    close(errp[1]);

    char m[96];
    struct buf b = { m, 0, sizeof m, 0 };
    b_str(&b, "pid ");
    b_u64(&b, (unsigned long long)pid);
    b_str(&b, "\n");
    (void)write_all(REPORT_FD, m, b.len);

    /* Only now, while the manager asks systemd for the task's scope: a
     * cgroup migration waits for an RCU grace period (the kernel's
     * cgroup_threadgroup_rwsem taken for writing), ~20 ms in the test bed's
     * guest, and every start waited for it before its pid was known. */
    int jerr = joined ? 0 : join_cgroups(&o);

    char go;
    ssize_t n;
    do
        n = read(GO_FD, &go, 1);
    while (n < 0 && errno == EINTR);
    if (jerr < 0 && n == 1) {
        /* Told after the go, in place of the exec report the manager then
         * reads: the start fails, and the child, held before exec, ends
         * without running the task. */
        fatal(-jerr, "join-cgroup");
        close(release[1]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        return 1;
    }
    if (n != 1 || go != 'g') {
        /* Aborted start: the child exits 127 on EOF without running the
         * task. No exit file: the task never existed. */
        close(release[1]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        write_aborted_mark(o.exit_file);
        return 0;
    }

    /* Open the counter now, while the cgroup certainly exists: systemd may
     * remove it the moment the task is gone. */
    struct oom w;
    oom_open(&w, o.cgroup_root, pid);

    (void)write_all(release[1], "r", 1);
    close(release[1]);

    /* The error pipe is CLOEXEC: EOF without data means execve succeeded. */
    char eb[64];
    size_t elen = 0;
    for (;;) {
        n = read(errp[0], eb + elen, sizeof eb - 1 - elen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        elen += (size_t)n;
        if (elen == sizeof eb - 1)
            break;
    }
    close(errp[0]);
    eb[elen] = '\0';
    int exec_err = 0;
    const char *exec_step = "";
    if (elen > 0) {
        char *sp = strchr(eb, ' ');
        unsigned e = 0;
        if (sp) {
            *sp = '\0';
            exec_step = sp + 1;
        }
        if (parse_u32z(eb, &e) < 0 || e == 0)
            e = EIO;
        exec_err = (int)e;
    }
    b.len = 0;
    if (exec_err) {
        b_str(&b, "execfailed ");
        b_u64(&b, (unsigned)exec_err);
        b_str(&b, " ");
        b_str(&b, exec_step);
        b_str(&b, "\n");
    } else {
        b_str(&b, "started\n");
    }
    (void)write_all(REPORT_FD, m, b.len);
    close(REPORT_FD);
    close(GO_FD);

    int status = 0, have_status = 0;
    for (;;) {
        struct pollfd p[2];
        nfds_t np = 0;
        p[np].fd = sfd;
        p[np].events = POLLIN;
        p[np++].revents = 0;
        int wfd = w.evfd >= 0 ? w.evfd : w.fd;
        if (wfd >= 0) {
            p[np].fd = wfd;
            p[np].events = w.evfd >= 0 ? POLLIN : POLLPRI;
            p[np++].revents = 0;
        }
        int r = poll(p, np, -1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            /* Cannot happen with valid fds; still never lose the status. */
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            have_status = 1;
            break;
        }
        /* OOM first: the kill raises the counter before the task dies. */
        if (np > 1 && p[1].revents)
            oom_refresh(&w);
        if (!p[0].revents)
            continue;
        struct signalfd_siginfo si;
        while (read(sfd, &si, sizeof si) > 0)
            ;
        pid_t c;
        int st;
        while ((c = waitpid(-1, &st, WNOHANG)) > 0) {
            if (c == pid) {
                status = st;
                have_status = 1;
            }
        }
        if (have_status)
            break;
    }

    if (w.fd >= 0)
        oom_refresh(&w);
    /* On v1 a notification followed by death by SIGKILL is the OOM killer
     * even when the counter could no longer be read. */
    int oom_killed = w.max > w.initial ||
                     (w.notified && have_status && WIFSIGNALED(status) &&
                      WTERMSIG(status) == SIGKILL);
    oom_close(&w);

    if (write_exit_file(o.exit_file, status, have_status, oom_killed, exec_err,
                        exec_step) < 0) {
        int e = errno;
        b.len = 0;
        b_u64(&b, (unsigned)e);
        say(2, "taskscope-shim: cannot write exit file, errno ", m);
        return 1;
    }
    /* A task that never ran wrote nothing: no output to keep. */
    if (!exec_err)
        linger_until_released(&logs, sfd);
    return 0;
}
