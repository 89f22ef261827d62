/* The OOM watch (oom.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/wait.h>

#include "oom.h"
#include "shim_text.h"

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

/* Stops watching the scope's counter (its cgroup is gone, or the end).
 * On v1 the eventfds stay open until oom_close: oom_finish may still need
 * what they count after the cgroup went. */
static void oom_close_scope(struct oom *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}

void oom_close(struct oom *w)
{
    oom_close_scope(w);
    if (w->evfd >= 0)
        close(w->evfd);
    if (w->gonefd >= 0)
        close(w->gonefd);
    if (w->parent_fd >= 0)
        close(w->parent_fd);
    w->evfd = w->gonefd = w->parent_fd = -1;
}

/* What the v1 eventfd counted since the last read, or 0. */
static uint64_t evfd_take(int fd)
{
    uint64_t cnt = 0;
    if (fd < 0 || read(fd, &cnt, sizeof cnt) != (ssize_t)sizeof cnt)
        return 0;
    return cnt;
}

/* Re-read after a wakeup; once the cgroup is gone kernfs keeps reporting
 * POLLERR, so stop watching instead of spinning (the parent's counter is
 * kept for oom_finish). */
void oom_refresh(struct oom *w)
{
    uint64_t cnt = evfd_take(w->evfd);
    long long v = w->fd >= 0 ? oom_read(w->fd) : -1;
    if (v < 0) {
        /* The cgroup is gone. On v1 what the eventfd counted may hold
         * notifications not yet seen besides the removal's own signal;
         * oom_finish tells them apart. */
        w->unseen += (long long)cnt;
        oom_close_scope(w);
        return;
    }
    /* The counter was readable after the eventfd's read, so the cgroup
     * was not removed yet and cnt holds notifications only. */
    if (cnt > 0)
        w->notified = 1;
    if (v > w->max)
        w->max = v;
}

/* v1, the scope's cgroup gone before a notification was seen. The kernel
 * signals each registered eventfd once more when the cgroup goes
 * (memcg_event_remove, "Notify userspace the event is going away": in
 * mm/memcontrol-v1.c of torvalds/linux today, in mm/memcontrol.c in older
 * kernels such as Debian 12's 6.1). So a count of 2 or more holds a
 * notification, and a count of 1 is one only while the removal's signal
 * has not come. The witness eventfd, which only the removal signals, says
 * it has: at the cgroup's offline the kernel queues both removals in one
 * loop over its event list (memcg1_css_offline; mem_cgroup_css_offline in
 * 6.1), evfd's first, since it was registered last and the list is added
 * to at its head, and evfd's removal takes no sleeping lock. */
static void oom_settle_v1(struct oom *w)
{
    if (w->gonefd >= 0) {
        struct pollfd p = { w->gonefd, POLLIN, 0 };
        int r;
        do
            r = poll(&p, 1, OOM_REMOVAL_WAIT_MS);
        while (r < 0 && errno == EINTR);
    }
    w->unseen += (long long)evfd_take(w->evfd);
    if (w->unseen >= 2)
        w->notified = 1;
}

static int died_of_sigkill(int status, int have_status)
{
    return have_status && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

void oom_finish(struct oom *w, int status, int have_status)
{
    if (w->fd >= 0)
        oom_refresh(w);
    if (w->fd >= 0)
        return;
    /* Only a death by SIGKILL can be the OOM killer's: no wait otherwise. */
    if (w->evfd >= 0 && !w->notified && died_of_sigkill(status, have_status))
        oom_settle_v1(w);
    if (w->parent_fd < 0)
        return;
    /* The scope's cgroup went before its last read: the parent's counter
     * says whether an OOM kill happened below it meanwhile. */
    long long p = oom_read(w->parent_fd);
    if (p > w->parent_initial)
        w->parent_rose = 1;
}

int oom_poll_fd(const struct oom *w, short *events)
{
    /* kernfs signals changes of memory.events with POLLPRI; nothing is
     * watched once the counter is gone */
    *events = w->evfd >= 0 ? POLLIN : POLLPRI;
    if (w->fd < 0)
        return -1;
    return w->evfd >= 0 ? w->evfd : w->fd;
}

int oom_killed(const struct oom *w, int status, int have_status)
{
    /* On v1 a notification followed by death by SIGKILL is the OOM killer
     * even when the counter could no longer be read; on v2 a rise of the
     * parent's counter, read because the scope's no longer could be, with
     * the same death. (The kernel counts an OOM kill before it sends the
     * SIGKILL: mm/oom_kill.c, __oom_kill_process.) */
    int killed = died_of_sigkill(status, have_status);
    return w->max > w->initial || ((w->notified || w->parent_rose) && killed);
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

/* Registers a new eventfd for "<eventfd> <control fd><args>" through
 * cgroup.event_control (ec); returns it, or -1. */
static int register_event(int ec, int control, const char *args)
{
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (efd < 0)
        return -1;
    char m[64];
    struct buf r = { m, 0, sizeof m, 0 };
    b_u64(&r, (unsigned)efd);
    b_str(&r, " ");
    b_u64(&r, (unsigned)control);
    b_str(&r, args);
    if (r.overflow || write_all(ec, m, r.len) != 0) {
        close(efd);
        return -1;
    }
    return efd;
}

void oom_open(struct oom *w, const char *root, pid_t pid)
{
    w->fd = w->evfd = w->gonefd = w->parent_fd = -1;
    w->initial = w->max = w->parent_initial = w->unseen = 0;
    w->notified = w->parent_rose = 0;

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
    if (ver == 2) {
        char *slash = strrchr(cg, '/');
        if (slash) { /* the parent: cg up to its last component */
            *slash = '\0';
            w->parent_fd = open_in_cgroup(dirfd, cg, sizeof cg, "memory.events", O_RDONLY);
            long long pv = w->parent_fd >= 0 ? oom_read(w->parent_fd) : -1;
            if (pv < 0) {
                if (w->parent_fd >= 0)
                    close(w->parent_fd);
                w->parent_fd = -1;
            }
            w->parent_initial = pv;
        }
        close(dirfd);
        return;
    }

    /* v1 files do not poll; the kernel notifies OOM through an eventfd
     * registered as "<eventfd> <oom_control fd>" in cgroup.event_control.
     * Without it we still read the counter once at the end. The witness
     * (oom_settle_v1) is registered first, as a threshold on
     * memory.usage_in_bytes at "-1", the most a counter holds, which no
     * usage reaches; "-1" is the kernel's word for that limit
     * (page_counter_memparse, mm/page_counter.c). */
    int ec = open_in_cgroup(dirfd, cg, sizeof cg, "cgroup.event_control",
                            O_WRONLY);
    int usage = open_in_cgroup(dirfd, cg, sizeof cg, "memory.usage_in_bytes",
                               O_RDONLY);
    close(dirfd);
    if (ec >= 0 && usage >= 0)
        w->gonefd = register_event(ec, usage, " -1");
    if (usage >= 0)
        close(usage);
    if (ec >= 0)
        w->evfd = register_event(ec, w->fd, "");
    if (w->evfd < 0 && w->gonefd >= 0) {
        close(w->gonefd);
        w->gonefd = -1;
    }
    if (ec >= 0)
        close(ec);
}
