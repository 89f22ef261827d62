/* The ended task kept unreaped (task_zombie.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "shim_text.h"
#include "task_zombie.h"

/* waitid's siginfo as the wait status waitpid would have given (the exit
 * file and the OOM check read that). */
static int wait_status(const siginfo_t *si)
{
    switch (si->si_code) {
    case CLD_EXITED:
        return (si->si_status & 0xff) << 8;
    case CLD_DUMPED:
        return (si->si_status & 0x7f) | 0x80;
    default: /* CLD_KILLED: only ended children are asked for */
        return si->si_status & 0x7f;
    }
}

/* 1 when `pid` had ended and is reaped now. */
static int reap(pid_t pid)
{
    pid_t r;
    do
        r = waitpid(pid, NULL, WNOHANG);
    while (r < 0 && errno == EINTR);
    return r > 0;
}

/* Every child but the task, as the kernel lists them: once the task is a
 * zombie, a look at any child (P_ALL) finds it first (the shim's first
 * child, ahead of every orphan that came to the subreaper later) and
 * hides the others behind it. Those not ended are left; with more than a
 * buffer's worth, the list is read again while reads reap some. Without
 * the list (a kernel without CONFIG_PROC_CHILDREN) the others wait, as
 * zombies, for the shim's own exit. */
static void reap_listed_but(pid_t task)
{
    char path[64];
    struct buf b = { path, 0, sizeof path, 0 };
    b_str(&b, "/proc/self/task/");
    b_u64(&b, (unsigned long long)getpid()); /* one thread: its tid */
    b_str(&b, "/children");
    for (;;) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return;
        char list[4096];
        size_t len = 0;
        while (len < sizeof list - 1) {
            ssize_t n = read(fd, list + len, sizeof list - 1 - len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            len += (size_t)n;
        }
        close(fd);
        const int full = len == sizeof list - 1;
        int reaped = 0;
        size_t i = 0;
        while (i < len) {
            size_t j = i;
            while (j < len && list[j] != ' ' && list[j] != '\n')
                j++;
            unsigned pid;
            /* The last number of a full buffer may be cut: read again. */
            if (j > i && (j < len || !full) && parse_u32(list + i, list + j, &pid) == 0 && (pid_t)pid != task &&
                reap((pid_t)pid))
                reaped = 1;
            i = j + 1;
        }
        if (!full || !reaped)
            return;
    }
}

int reap_all_but(pid_t task, int *status)
{
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
            if (errno == EINTR)
                continue;
            return 0; /* ECHILD: cannot be while the task is unreaped */
        }
        if (si.si_pid == 0)
            return 0; /* none has ended */
        if (si.si_pid != task) {
            /* Reaped by its pid, never "any": the task may end in between. */
            (void)reap(si.si_pid);
            continue;
        }
        *status = wait_status(&si);
        reap_listed_but(task);
        return 1;
    }
}

void await_task_unreaped(pid_t task, int *status)
{
    siginfo_t si;
    for (;;) {
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)task, &si, WEXITED | WNOWAIT) == 0 || errno != EINTR)
            break;
    }
    *status = wait_status(&si);
}
