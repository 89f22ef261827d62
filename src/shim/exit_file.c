/* The exit file and the aborted mark (exit_file.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h> /* renameat() only; no FILE is ever used */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "exit_file.h"
#include "shim_protocol.h"
#include "shim_text.h"

static void key_i64(struct buf *o, const char *key, long long v)
{
    b_str(o, key);
    b_str(o, "=");
    b_i64(o, v);
    b_str(o, "\n");
}

int write_exit_file(char *path, int status, int have_status, int oom_killed, int exec_err,
                    const char *exec_step)
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
    key_i64(&o, SHIM_EXIT_CODE, code);
    key_i64(&o, SHIM_EXIT_SIGNAL, sig);
    key_i64(&o, SHIM_EXIT_OOM_KILLED, oom_killed);
    key_i64(&o, SHIM_EXIT_FINISHED_AT, us);
    key_i64(&o, SHIM_EXIT_EXEC_ERROR, exec_err);
    b_str(&o, SHIM_EXIT_EXEC_STEP "=");
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

/* An aborted start leaves no exit file: the task never ran. This mark
 * tells a manager that recovers the task's record (its predecessor died
 * mid-start) that the task never ran, rather than that its shim was
 * killed. Best effort: without it the task is reported lost, as before. */
void write_aborted_mark(const char *exit_file)
{
    char p[PATH_MAX];
    struct buf b = { p, 0, sizeof p, 0 };
    b_str(&b, exit_file);
    b_str(&b, SHIM_ABORTED_SUFFIX);
    char c[32];
    struct buf o = { c, 0, sizeof c, 0 };
    key_i64(&o, SHIM_ABORTED_SHIM_PID, (long long)getpid());
    if (b.overflow || o.overflow)
        return;
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    (void)write_all(fd, c, o.len);
    close(fd);
}
