/* Joining an allocation's network namespace: the task child's first step,
 * before anything else of its setup, so the task's first instruction (and
 * every later namespace or mount step) already runs inside it. Included
 * by child.c alone. */
#ifndef TASKSCOPE_SHIM_NETNS_H
#define TASKSCOPE_SHIM_NETNS_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

/* 0, or errno of the open or setns that failed (-1 on none: path NULL). */
static int shim_join_netns(const char *path)
{
    if (!path)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    int err = setns(fd, CLONE_NEWNET) < 0 ? errno : 0;
    close(fd);
    return err;
}

#endif
