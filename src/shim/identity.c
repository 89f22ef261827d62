/* Becoming the task (identity.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stddef.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "identity.h"

int become_task(const struct opts *o, const gid_t *groups, int ngroups, const char **step)
{
    int e;
    if ((e = apply_limits(&o->limits, step)) || (e = caps_before_ids(&o->iso, step)))
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
