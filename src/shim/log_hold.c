/* The log holds (log_hold.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "log_hold.h"
#include "safe_open.h"
#include "task_zombie.h"

int hold_logs(const struct opts *o, struct log_hold *h)
{
    h->out = h->err = h->release = h->fwd_out = h->fwd_err = -1;
    if (!o->release_fifo)
        return 0;
    /* Where the streamer forwards the output: checked and held as the
     * task's own output would be (a fifo read-write, a file appended to). */
    if (o->forward_stdout && (h->fwd_out = open_stream(o->forward_stdout, STREAM_OUT, o->uid)) < 0)
        return -1;
    if (o->forward_stderr && (h->fwd_err = open_stream(o->forward_stderr, STREAM_OUT, o->uid)) < 0)
        return -1;
    /* Fifos only, opened the safe way (safe_open.h). Read-write: the open
     * never waits for the other side. */
    if (o->stdout_path && (h->out = open_stream(o->stdout_path, STREAM_HOLD, o->uid)) < 0)
        return -1;
    if (o->stderr_path && (h->err = open_stream(o->stderr_path, STREAM_HOLD, o->uid)) < 0)
        return -1;
    /* Read-only and non-blocking: opens at once, and reports no hangup
     * until a writer has come and gone. */
    h->release = open_stream(o->release_fifo, STREAM_RELEASE, o->uid);
    return h->release < 0 ? -1 : 0;
}

/* A release fifo unlinked behind our back can never be written to: looked
 * at once a minute, never sooner, since thousands of shims may wait at
 * once while a streamer is down. */
void linger_until_released(struct log_hold *h, int sfd, pid_t spare)
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
            int ignored;
            if (spare > 0)
                (void)reap_all_but(spare, &ignored);
            else
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
    if (h->fwd_out >= 0)
        close(h->fwd_out);
    if (h->fwd_err >= 0)
        close(h->fwd_err);
}
