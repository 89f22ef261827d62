/*
 * taskscope-shim --exec: a command exec'd into a running task (protocol in
 * shim_protocol.h). It becomes the task the way the task did, with the
 * same code (identity.c) and the same resolved spec, saved by the manager
 * when the task started: so an exec into an isolated task gets the task's
 * identity, capability sets and no_new_privs, never the streamer's, and a
 * user that exists only in the task's root is already a number.
 *
 * The streamer forks, has systemd move the child into the task's scope,
 * and the child execs this (from an fd: the shim need not exist in the
 * task's root). Only system calls from here on; every failure is reported
 * once on the report fd with the failing step's name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "exec.h"
#include "fds.h"
#include "identity.h"
#include "options.h"
#include "shim_protocol.h"
#include "shim_text.h"

/* The saved spec: a few dozen words (identity, chroot_env binds, volumes).
 * Static, not on the stack: only an exec's short-lived shim touches it. */
#define SPEC_MAX 65536
#define SPEC_WORDS 1024
static char spec_text[SPEC_MAX];
static char *spec_argv[SPEC_WORDS + 2];

static void report(int32_t kind, int32_t value, const char *step, const char *detail)
{
    struct shim_exec_report r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.value = value;
    size_t k = 0;
    const char *parts[2] = {step, detail};
    for (int i = 0; i < 2; i++)
        for (const char *s = parts[i]; s && *s && k + 1 < sizeof r.step; s++)
            r.step[k++] = *s;
    (void)write_all(SHIM_EXEC_REPORT_FD, (const char *)&r, sizeof r);
}

static _Noreturn void fail(const char *step, int err, const char *detail)
{
    report(SHIM_REPORT_FAILED, err, step, detail);
    _exit(err == ENOENT ? 127 : 126);
}

/* a + b into out (cap bytes); 0, or -1 when it does not fit. */
static int join2(char *out, size_t cap, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la + lb + 1 > cap)
        return -1;
    memcpy(out, a, la);
    memcpy(out + la, b, lb + 1);
    return 0;
}

static int read_spec(struct opts *o)
{
    size_t len = 0;
    for (;;) {
        ssize_t n = read(SHIM_EXEC_SPEC_FD, spec_text + len, SPEC_MAX - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            break;
        len += (size_t)n;
        if (len == SPEC_MAX - 1)
            return EFBIG;
    }
    close(SHIM_EXEC_SPEC_FD);
    return shim_parse_spec(spec_text, len, spec_argv, SPEC_WORDS, o);
}

/* nsenter's order; a kind the kernel lacks is skipped. */
static const struct {
    const char *kind;
    int type;
} namespaces[] = {
    {"cgroup", CLONE_NEWCGROUP}, {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS},
    {"net", CLONE_NEWNET},       {"pid", CLONE_NEWPID}, {"mnt", CLONE_NEWNS},
};
#define NNS (sizeof namespaces / sizeof namespaces[0])

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Joins the namespaces of the task's process that differ from ours, then
 * its root when that still differs (a mount namespace's own root is the
 * task's pivoted root already; a chroot'd task is entered by chroot). */
static void join_task(const char *pid)
{
    char proc[64], path[128];
    if (join2(proc, sizeof proc, "/proc/", pid) < 0)
        fail("args", EINVAL, NULL);
    int fds[NNS];
    for (size_t i = 0; i < NNS; i++) {
        struct stat mine, theirs;
        fds[i] = -1;
        if (join2(path, sizeof path, "/proc/self/ns/", namespaces[i].kind) < 0)
            fail("args", EINVAL, NULL);
        if (stat(path, &mine) < 0) {
            if (errno == ENOENT)
                continue;
            fail("stat ns ", errno, namespaces[i].kind);
        }
        if (join2(path, sizeof path, proc, "/ns/") < 0 ||
            join2(path + strlen(path), sizeof path - strlen(path), namespaces[i].kind, "") < 0)
            fail("args", EINVAL, NULL);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &theirs) < 0)
            fail("open ns ", errno, namespaces[i].kind);
        if (same_file(&mine, &theirs))
            close(fd);
        else
            fds[i] = fd;
    }
    if (join2(path, sizeof path, proc, "/root") < 0)
        fail("args", EINVAL, NULL);
    int root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        fail("open root", errno, NULL);
    /* Opened while the task lived (its pidfd not yet readable): they are
     * its namespaces, not those of a process that took its pid. */
    struct pollfd p = {SHIM_EXEC_PIDFD, POLLIN, 0};
    if (poll(&p, 1, 0) != 0)
        fail("task exited", ESRCH, NULL);
    close(SHIM_EXEC_PIDFD);
    for (size_t i = 0; i < NNS; i++) {
        if (fds[i] < 0)
            continue;
        if (setns(fds[i], namespaces[i].type) < 0)
            fail("setns ", errno, namespaces[i].kind);
        close(fds[i]);
    }
    struct stat theirs, mine;
    if (fstat(root, &theirs) < 0 || stat("/", &mine) < 0)
        fail("stat root", errno, NULL);
    if (!same_file(&theirs, &mine) && (fchdir(root) < 0 || chroot(".") < 0))
        fail("chroot", errno, NULL);
    close(root);
}

/* Dies the way the command died, so that whoever waits for the keeper sees
 * the command's own status. */
static _Noreturn void mirror(int status)
{
    if (WIFEXITED(status))
        _exit(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        /* The command may have dumped core; the keeper must not dump its own. */
        (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        struct rlimit none = {0, 0};
        (void)setrlimit(RLIMIT_CORE, &none);
        (void)signal(sig, SIG_DFL);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, sig);
        (void)sigprocmask(SIG_UNBLOCK, &s, NULL);
        (void)kill(getpid(), sig);
        _exit(128 + sig);
    }
    _exit(126);
}

/* The keeper holds nothing of the session but the status pipe: its pipes
 * and terminal end with the command. Not dumpable: no process of the task
 * may reach even that descriptor through /proc. */
static _Noreturn void keep(pid_t command)
{
    report(SHIM_REPORT_LEADER, command, "", NULL);
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (dup2(SHIM_EXEC_STATUS_FD, 0) < 0)
        _exit(126);
    close_from(1, -1);
    int status = 0;
    while (waitpid(command, &status, 0) < 0)
        if (errno != EINTR)
            _exit(126);
    /* One write below PIPE_BUF: whoever reads gets all of it or nothing. */
    (void)write_all(0, (const char *)&status, sizeof status);
    mirror(status);
}

/* execvpe(3) with the PATH of the command's environment, not ours. */
static _Noreturn void exec_command(char **argv, char **envp)
{
    const char *file = argv[0];
    if (strchr(file, '/')) {
        execve(file, argv, envp);
        fail("execve ", errno, file);
    }
    const char *path = "";
    for (char **e = envp; *e; e++)
        if (strncmp(*e, "PATH=", 5) == 0)
            path = *e + 5;
    int err = ENOENT;
    size_t flen = strlen(file);
    char buf[PATH_MAX];
    for (const char *dir = path;;) {
        const char *end = strchrnul(dir, ':');
        size_t dlen = (size_t)(end - dir);
        if (dlen + flen + 3 <= sizeof buf) {
            size_t k = 0;
            if (dlen == 0) {
                buf[k++] = '.';
            } else {
                memcpy(buf, dir, dlen);
                k = dlen;
            }
            buf[k++] = '/';
            memcpy(buf + k, file, flen + 1);
            execve(buf, argv, envp);
            switch (errno) {
            case EACCES:
                err = EACCES;
                break;
            case ENOENT: case ENOTDIR: case ESTALE: case ELOOP: case ENAMETOOLONG: case ENODEV:
                break;
            default:
                fail("execve ", errno, file);
            }
        }
        if (*end == '\0')
            break;
        dir = end + 1;
    }
    fail("execve ", err, file);
}

int shim_exec_main(int argc, char **argv, char **envp)
{
    /* EOF on the report pipe tells the streamer the command was executed. */
    (void)fcntl(SHIM_EXEC_REPORT_FD, F_SETFD, FD_CLOEXEC);
    /* Executed from an fd, the kernel names us after its number. */
    (void)prctl(PR_SET_NAME, "taskscope-shim", 0, 0, 0);
    int i = 3, tty = 0;
    unsigned pid;
    if (argc < 3 || parse_u32z(argv[2], &pid) < 0 || pid == 0)
        fail("args", EINVAL, NULL);
    if (i < argc && strcmp(argv[i], SHIM_OPT_TTY) == 0) {
        tty = 1;
        i++;
    }
    if (i + 1 >= argc || strcmp(argv[i], "--") != 0)
        fail("args", EINVAL, NULL);
    char **command = &argv[i + 1];

    struct opts o;
    gid_t groups[MAX_GROUPS];
    int ngroups = 0, e;
    if ((e = read_spec(&o)))
        fail("process spec", e, NULL);
    if (parse_groups(o.groups, groups, &ngroups) < 0)
        fail("process spec", EINVAL, NULL);

    join_task(argv[2]);

    pid_t c = fork();
    if (c < 0)
        fail("fork", errno, NULL);
    if (c > 0)
        keep(c);
    close(SHIM_EXEC_STATUS_FD);
    if (setsid() < 0)
        fail("setsid", errno, NULL);
    if (tty) {
        if (ioctl(0, TIOCSCTTY, 0) < 0)
            fail("TIOCSCTTY", errno, NULL);
        /* Its user owns its terminal, as after a login. */
        (void)fchown(0, o.uid, (gid_t)-1);
    }
    const char *step = "";
    if ((e = become_task(&o, groups, ngroups, &step)))
        fail(step, e, NULL);
    /* Set after the identity change, which clears it: the command dies with
     * its keeper rather than run on unwatched. */
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (chdir(o.cwd) < 0)
        fail("chdir ", errno, o.cwd);
    if ((e = reset_signals(&step)))
        fail(step, e, NULL);
    close_from(SHIM_EXEC_REPORT_FD + 1, -1);
    exec_command(command, envp);
}
