/*
 * The log holds. A pipe's contents live only while someone holds one of
 * its ends. The streamer reads the task's log fifos, but it restarts, and
 * the task may write and end meanwhile; the shim outlives both daemons, so
 * it holds both fifos from before the task exists until the streamer says
 * it has drained them: one byte, or a writer's close, on the release fifo.
 * Held here they cost neither daemon a descriptor nor systemd's fd stores
 * an entry (whose every addition is compared with every stored fd).
 */
#ifndef TASKSCOPE_SHIM_LOG_HOLD_H
#define TASKSCOPE_SHIM_LOG_HOLD_H

#include <sys/types.h>

#include "options.h"

struct log_hold {
    int out, err, release;
    int fwd_out, fwd_err; /* --forward-stdout/--forward-stderr, held alike */
};

/* Opens the holds when --release-fifo is given (nothing otherwise).
 * 0, or -1 with errno. */
int hold_logs(const struct opts *o, struct log_hold *h);

/* After the exit record: waits for the release, reaping what the task
 * left behind meanwhile (the shim is its subreaper; sfd is its SIGCHLD
 * signalfd) but never `spare` (the ended task kept a zombie, or 0), then
 * drops the holds. */
void linger_until_released(struct log_hold *h, int sfd, pid_t spare);

#endif
