/*
 * The OOM watch: the task's OOM-kill counter (memory.events on cgroup v2,
 * memory.oom_control with an eventfd on v1), opened while its cgroup
 * certainly exists (systemd may remove it the moment the task is gone) and
 * read again after every wakeup and once at the end.
 */
#ifndef TASKSCOPE_SHIM_OOM_H
#define TASKSCOPE_SHIM_OOM_H

#include <sys/types.h>

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
    /* v1: a second eventfd that only the cgroup's removal signals (a usage
     * threshold no usage reaches), and what evfd counted once the counter
     * could no longer be read: notifications not yet seen, and the
     * removal's own signal (oom_settle_v1 in oom.c). Seen in the v1 guest:
     * the shim first read evfd after the removal, so its notification was
     * taken for the removal's (one of the 14 kills of test_oom_reporting
     * in stop 65's CI). */
    int gonefd;
    long long unseen;
    /* v2: the parent cgroup's memory.events (the task's slice), whose
     * oom_kill counts every OOM kill below it. The task's scope empties
     * when the task dies, before the shim reaps it, and systemd removes its
     * cgroup at once: a read of the scope's counter after that fails (the
     * kernel raises it before it sends the SIGKILL, but the shim may look
     * only after the removal; seen in 4 of 17 OOM kills in the v2 guest).
     * The slice outlives the task's exit record, so its counter still
     * tells. */
    int parent_fd;
    long long parent_initial;
    int parent_rose; /* the parent's counter rose while the scope's could not be read */
};

/* Opens the counter of pid's memory cgroup under root (the cgroupfs
 * mount); without one (no memory controller) w->fd stays -1. */
void oom_open(struct oom *w, const char *root, pid_t pid);

/* The fd to poll (and its events) for a wakeup; -1 when none. */
int oom_poll_fd(const struct oom *w, short *events);

/* Re-reads the counter after a wakeup. */
void oom_refresh(struct oom *w);

/* The longest the last read waits for the kernel's removal signal (v1,
 * the cgroup gone, the task dead of SIGKILL): it comes within an RCU grace
 * period of the cgroup's rmdir, so this is only a bound. */
#define OOM_REMOVAL_WAIT_MS 2000

/* The last read, once the task is reaped with `status`: the scope's
 * counter, or, when its cgroup is gone already, the v1 eventfd's count or
 * the v2 parent's counter. */
void oom_finish(struct oom *w, int status, int have_status);

/* Whether the task that ended with `status` was OOM killed. */
int oom_killed(const struct oom *w, int status, int have_status);

void oom_close(struct oom *w);

#endif
