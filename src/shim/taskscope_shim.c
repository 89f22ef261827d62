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
 * The protocol (command line, report lines, exit file) is shim_protocol.h,
 * which the manager's launcher includes too. This file is the order of
 * things; each concern lives in its own file:
 *   options.c      the command line
 *   log_hold.c     the log fifos held until the streamer drained them
 *   cgroup_home.c  where the task is made and the shim lives
 *   child.c        the task child's setup, a table of named steps, using
 *   identity.c     becoming the task (also for exec), caps.c, namespaces.c,
 *                  rootfs.c (isolation)
 *   oom.c          the OOM watch
 *   exit_file.c    the exit record and the aborted mark
 *   task_zombie.c  the ended task left unreaped until the logs' release
 *   exec.c         taskscope-shim --exec
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "cgroup_home.h"
#include "child.h"
#include "exec.h"
#include "exit_file.h"
#include "fds.h"
#include "log_hold.h"
#include "oom.h"
#include "options.h"
#include "shim_protocol.h"
#include "shim_text.h"
#include "task_zombie.h"

#define REPORT_FD SHIM_TASK_REPORT_FD
#define GO_FD SHIM_TASK_GO_FD

struct shim {
    struct opts o;
    gid_t groups[MAX_GROUPS];
    int ngroups;
    int sfd; /* SIGCHLD, as a signalfd */
    struct log_hold logs;
    int release[2]; /* to the child: 'r' once it is in its scope */
    int errp[2];    /* from the child: "ERRNO STEP", or EOF once it executed */
    pid_t pid;      /* the task */
    int joined;     /* moved into the shims' scope yet */
    struct oom oom;
    char exec_report[64];
    int exec_err;
    const char *exec_step;
    int status, have_status;
};

/* The manager could not have started us properly: tell it on the report
 * pipe if we can, and on stderr for whoever reads the journal. */
static void fatal(int err, const char *step)
{
    char m[96];
    struct buf o = { m, 0, sizeof m, 0 };
    b_str(&o, SHIM_LINE_ERROR " ");
    b_u64(&o, (unsigned)err);
    b_str(&o, " ");
    b_str(&o, step);
    b_str(&o, "\n");
    (void)write_all(REPORT_FD, m, o.len);
    say(2, "taskscope-shim: ", m);
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

/* ---- before the fork: a table of named steps, like the child's ---- */

/* Own session: the manager's terminal/process group signals and its death
 * must not reach us (KillMode=process keeps us alive). The task's
 * daemonized orphans come back to us rather than PID 1, so nothing of the
 * task escapes being reaped by the supervisor. The manager kills tasks
 * through systemd, never the shim; a writer whose manager went away must
 * not die of SIGPIPE either. */
static int step_session(struct shim *s, const char **step)
{
    (void)s;
    (void)step;
    (void)setsid();
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, NULL);
    sigaction(SIGHUP, &ign, NULL);
    sigaction(SIGTERM, &ign, NULL);
    sigaction(SIGINT, &ign, NULL);
    return 0;
}

static int step_sigchld(struct shim *s, const char **step)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0)
        return errno;
    *step = "signalfd";
    s->sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    return s->sfd < 0 ? errno : 0;
}

static int step_hold_logs(struct shim *s, const char **step)
{
    (void)step;
    return hold_logs(&s->o, &s->logs) < 0 ? errno : 0;
}

static int step_pipes(struct shim *s, const char **step)
{
    (void)step;
    return pipe2(s->release, O_CLOEXEC) < 0 || pipe2(s->errp, O_CLOEXEC) < 0 ? errno : 0;
}

/* A raw clone: with CLONE_NEWPID the task is pid 1 of its own pid
 * namespace (no init of ours in between: one process less per task, and
 * the shim outside stays the one parent that reaps and records the exit;
 * when pid 1 ends the kernel ends the rest of the namespace). Without
 * flags this is fork(); the child only makes raw syscalls. */
static int step_fork(struct shim *s, const char **step)
{
    unsigned long cflags = iso_clone_flags(&s->o.iso);
    int birth = birth_cgroup(&s->o);
    s->pid = -1;
    if (birth >= 0) {
        s->pid = clone_task(cflags, birth);
        close(birth);
    }
    if (s->pid < 0) {
        /* No clone into the shims' scope (cgroup v1 or hybrid, a kernel
         * before 5.7, or one that refused): the shim moves first, as it
         * always did, so that the task is made there; the start then
         * waits for that move. */
        if (s->o.njoin) {
            *step = "join-cgroup";
            int jerr = join_cgroups(&s->o);
            if (jerr < 0)
                return -jerr;
            s->joined = 1;
        }
        *step = "fork";
        s->pid = clone_task(cflags, -1);
    }
    return s->pid < 0 ? errno : 0;
}

static const struct {
    const char *name;
    int (*run)(struct shim *, const char **step);
} setup_steps[] = {
    {"session", step_session},
    {"sigmask", step_sigchld},
    {"hold-logs", step_hold_logs},
    {"pipe", step_pipes},
    {"fork", step_fork},
};

/* ---- after the fork: the order of a start, then of an end ---- */

static _Noreturn void become_child(struct shim *s, char **envp)
{
    /* Drop the manager's pipes now: if the shim dies, the manager must
     * see EOF even while this child still waits for release. */
    close(REPORT_FD);
    close(GO_FD);
    close(s->sfd);
    close(s->release[1]);
    close(s->errp[0]);
    struct child_setup c = { &s->o, s->groups, s->ngroups, s->release[0], s->errp[1], envp };
    run_child(&c);
}

static void report_pid(struct shim *s)
{
    close(s->release[0]);
    close(s->errp[1]);
    char m[48];
    struct buf b = { m, 0, sizeof m, 0 };
    b_str(&b, SHIM_LINE_PID " ");
    b_u64(&b, (unsigned long long)s->pid);
    b_str(&b, "\n");
    (void)write_all(REPORT_FD, m, b.len);
}

static void reap_held_child(struct shim *s)
{
    /* The child, held before exec, exits 127 on EOF without running. */
    close(s->release[1]);
    while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

enum go { GO, GO_ABORTED, GO_JOIN_FAILED };

/* Moves into the shims' scope (now, while the manager asks systemd for the
 * task's scope: a cgroup migration waits for an RCU grace period, ~20 ms
 * in the test bed's guest, and every start waited for it before its pid
 * was known), then waits for the manager's go. */
static enum go await_go(struct shim *s)
{
    int jerr = s->joined ? 0 : join_cgroups(&s->o);
    char go;
    ssize_t n;
    do
        n = read(GO_FD, &go, 1);
    while (n < 0 && errno == EINTR);
    if (jerr < 0 && n == 1) {
        /* Told after the go, in place of the exec report the manager then
         * reads: the start fails, and the task never runs. */
        fatal(-jerr, "join-cgroup");
        return GO_JOIN_FAILED;
    }
    return n == 1 && go == SHIM_GO_BYTE ? GO : GO_ABORTED;
}

static void release_task(struct shim *s)
{
    /* Open the counter now, while the cgroup certainly exists: systemd may
     * remove it the moment the task is gone. */
    oom_open(&s->oom, s->o.cgroup_root, s->pid);
    (void)write_all(s->release[1], "r", 1);
    close(s->release[1]);
}

/* The error pipe is CLOEXEC: EOF without data means execve succeeded. */
static void report_exec(struct shim *s)
{
    char *eb = s->exec_report;
    size_t elen = 0;
    for (;;) {
        ssize_t n = read(s->errp[0], eb + elen, sizeof s->exec_report - 1 - elen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        elen += (size_t)n;
        if (elen == sizeof s->exec_report - 1)
            break;
    }
    close(s->errp[0]);
    eb[elen] = '\0';
    s->exec_err = 0;
    s->exec_step = "";
    if (elen > 0) {
        char *sp = strchr(eb, ' ');
        unsigned e = 0;
        if (sp) {
            *sp = '\0';
            s->exec_step = sp + 1;
        }
        if (parse_u32z(eb, &e) < 0 || e == 0)
            e = EIO;
        s->exec_err = (int)e;
    }
    char m[96];
    struct buf b = { m, 0, sizeof m, 0 };
    if (s->exec_err) {
        b_str(&b, SHIM_LINE_EXECFAILED " ");
        b_u64(&b, (unsigned)s->exec_err);
        b_str(&b, " ");
        b_str(&b, s->exec_step);
        b_str(&b, "\n");
    } else {
        b_str(&b, SHIM_LINE_STARTED "\n");
    }
    (void)write_all(REPORT_FD, m, b.len);
    close(REPORT_FD);
    close(GO_FD);
}

/* Reaps everything that ends (we are the subreaper) until the task itself
 * has; an OOM wakeup is read first: the kill raises the counter before the
 * task dies. With --keep-task-zombie the task's status is read and the
 * task itself left unreaped (task_zombie.h). */
static void await_exit(struct shim *s)
{
    s->status = 0;
    s->have_status = 0;
    for (;;) {
        struct pollfd p[2];
        nfds_t np = 0;
        p[np].fd = s->sfd;
        p[np].events = POLLIN;
        p[np++].revents = 0;
        short events;
        int wfd = oom_poll_fd(&s->oom, &events);
        if (wfd >= 0) {
            p[np].fd = wfd;
            p[np].events = events;
            p[np++].revents = 0;
        }
        int r = poll(p, np, -1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            /* Cannot happen with valid fds; still never lose the status. */
            if (s->o.keep_task_zombie)
                await_task_unreaped(s->pid, &s->status);
            else
                while (waitpid(s->pid, &s->status, 0) < 0 && errno == EINTR)
                    ;
            s->have_status = 1;
            return;
        }
        if (np > 1 && p[1].revents)
            oom_refresh(&s->oom);
        if (!p[0].revents)
            continue;
        struct signalfd_siginfo si;
        while (read(s->sfd, &si, sizeof si) > 0)
            ;
        if (s->o.keep_task_zombie) {
            s->have_status = reap_all_but(s->pid, &s->status);
            if (s->have_status)
                return;
            continue;
        }
        pid_t c;
        int st;
        while ((c = waitpid(-1, &st, WNOHANG)) > 0) {
            if (c == s->pid) {
                s->status = st;
                s->have_status = 1;
            }
        }
        if (s->have_status)
            return;
    }
}

static int record_exit(struct shim *s)
{
    oom_finish(&s->oom, s->status, s->have_status);
    int oom_killed_now = oom_killed(&s->oom, s->status, s->have_status);
    oom_close(&s->oom);
    if (write_exit_file(s->o.exit_file, s->status, s->have_status, oom_killed_now, s->exec_err,
                        s->exec_step) < 0) {
        char m[24];
        shim_format_u64(m, (unsigned)errno);
        say(2, "taskscope-shim: cannot write exit file, errno ", m);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv, char **envp)
{
    if (argc == 2 && strcmp(argv[1], SHIM_OPT_HOLD) == 0)
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

    struct shim s;
    memset(&s, 0, sizeof s);
    if (shim_parse_command(argc, argv, &s.o) < 0 || parse_groups(s.o.groups, s.groups, &s.ngroups) < 0) {
        fatal(EINVAL, "args");
        say(2, SHIM_USAGE, "");
        return 2;
    }
    for (size_t i = 0; i < sizeof setup_steps / sizeof setup_steps[0]; i++) {
        const char *step = setup_steps[i].name;
        int e = setup_steps[i].run(&s, &step);
        if (e) {
            fatal(e, step);
            return 1;
        }
    }
    if (s.pid == 0)
        become_child(&s, envp);

    report_pid(&s);
    switch (await_go(&s)) {
    case GO:
        break;
    case GO_JOIN_FAILED:
        reap_held_child(&s);
        return 1;
    case GO_ABORTED:
        /* No exit file: the task never existed. */
        reap_held_child(&s);
        write_aborted_mark(s.o.exit_file);
        return 0;
    }
    release_task(&s);
    report_exec(&s);
    await_exit(&s);
    if (record_exit(&s))
        return 1;
    /* A task that never ran wrote nothing: no output to keep. */
    if (!s.exec_err)
        linger_until_released(&s.logs, s.sfd, s.o.keep_task_zombie ? s.pid : 0);
    /* Its output is drained (or there was none): its pid may go. */
    if (s.o.keep_task_zombie)
        while (waitpid(s.pid, NULL, 0) < 0 && errno == EINTR)
            ;
    return 0;
}
