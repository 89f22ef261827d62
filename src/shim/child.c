/* The task child (child.h): its setup as a table of named steps. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "child.h"
#include "fds.h"
#include "identity.h"
#include "isolation.h"
#include "safe_open.h"
#include "shim_netns.h"
#include "shim_text.h"

struct child {
    const struct child_setup *s;
    /* The step's own name, or a more precise one the step set (the
     * isolation and identity steps name their own parts). */
    const char *step;
};

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

/* The allocation's network first: every later step and the task's first
 * instruction run inside it. */
static int step_netns(struct child *c)
{
    return shim_join_netns(c->s->o->netns);
}

/* Stay stopped until the manager has put our PID into the task's scope:
 * not one instruction of the task may run outside its limits. EOF means
 * the start was aborted (or the shim died): leave without exec. */
static int step_release(struct child *c)
{
    char r;
    ssize_t n;
    do
        n = read(c->s->release_rd, &r, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1 || r != 'r')
        _exit(127);
    close(c->s->release_rd);
    return 0;
}

/* The shim made sure fds 0-2 are open, so these land on fds >= 3 and dup2
 * below always clears their CLOEXEC flag on the copy. Opened as root (the
 * scheduler's fifos are root's, mode 0600) before the identity change, so
 * each is opened the safe way: no symlink followed, the type and owner
 * checked on the fd (safe_open.h). */
static int step_stdio(struct child *c)
{
    const struct opts *o = c->s->o;
    c->step = "stdin";
    int in = open_stream(o->stdin_path ? o->stdin_path : "/dev/null", STREAM_IN, o->uid);
    if (in < 0)
        return errno;
    int out = -1, err = -1;
    c->step = "stdout";
    if (o->stdout_path && (out = open_stream(o->stdout_path, STREAM_OUT, o->uid)) < 0)
        return errno;
    c->step = "stderr";
    if (o->stderr_path && (err = open_stream(o->stderr_path, STREAM_OUT, o->uid)) < 0)
        return errno;
    c->step = "stdin";
    if (dup2(in, 0) < 0)
        return errno;
    c->step = "stdout";
    if (out >= 0 && dup2(out, 1) < 0)
        return errno;
    c->step = "stderr";
    if (err >= 0 && dup2(err, 2) < 0)
        return errno;
    return 0;
}

/* After the output is open (the log fifos are host paths) and before the
 * identity change (mounts need root). */
static int step_isolation(struct child *c)
{
    const struct iso_opts *iso = &c->s->o->iso;
    int e;
    if (!iso->root)
        return 0;
    c->step = "";
    if ((e = iso_unshare(iso, &c->step)) || (e = iso_enter_root(iso, &c->step)))
        return e;
    return 0;
}

static int step_identity(struct child *c)
{
    c->step = "";
    return become_task(c->s->o, c->s->groups, c->s->ngroups, &c->step);
}

/* As the task's user: a directory it may not enter is refused. */
static int step_cwd(struct child *c)
{
    return chdir(c->s->o->cwd) < 0 ? errno : 0;
}

/* Keep the error pipe: it is CLOEXEC, so a successful execve closes it. */
static int step_close_fds(struct child *c)
{
    close_from(3, c->s->errfd);
    return 0;
}

static int step_signals(struct child *c)
{
    return reset_signals(&c->step);
}

static const struct {
    const char *name;
    int (*run)(struct child *);
} steps[] = {
    {"setns", step_netns},
    {"release", step_release},
    {"stdio", step_stdio},
    {"isolation", step_isolation},
    {"identity", step_identity},
    {"chdir", step_cwd},
    {"close-fds", step_close_fds},
    {"signals", step_signals},
};

_Noreturn void run_child(const struct child_setup *s)
{
    struct child c = { s, "" };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        c.step = steps[i].name;
        int e = steps[i].run(&c);
        if (e)
            child_fail(s->errfd, e, c.step);
    }
    execve(s->o->prog, s->o->argv, s->envp);
    child_fail(s->errfd, errno, "execve");
}
