/* The shim's own file descriptors (fds.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "fds.h"
#include "shim_text.h"

static int close_fds_from_proc(int first, int keep)
{
    int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    char d[1024];
    for (;;) {
        long n = syscall(SYS_getdents64, dfd, d, sizeof d);
        if (n < 0) {
            close(dfd);
            return -1;
        }
        if (n == 0)
            break;
        for (long off = 0; off < n;) {
            /* struct linux_dirent64: ino(8) off(8) reclen(2) type(1) name */
            unsigned short reclen;
            memcpy(&reclen, d + off + 16, sizeof reclen);
            const char *name = d + off + 19;
            unsigned fd;
            if (parse_u32z(name, &fd) == 0 && (int)fd >= first && (int)fd != keep &&
                (int)fd != dfd)
                close((int)fd);
            off += reclen;
        }
    }
    close(dfd);
    return 0;
}

void close_from(int first, int keep)
{
    if (keep < first) {
        if (syscall(SYS_close_range, (unsigned)first, ~0u, 0u) == 0)
            return;
    } else if ((keep == first ||
                syscall(SYS_close_range, (unsigned)first, (unsigned)keep - 1, 0u) == 0) &&
               syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) == 0) {
        return;
    }
    if (close_fds_from_proc(first, keep) == 0)
        return;
    struct rlimit rl;
    long max = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (long)rl.rlim_cur < max)
        max = (long)rl.rlim_cur;
    for (long fd = first; fd < max; fd++)
        if (fd != keep)
            close((int)fd);
}

void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        int n = open("/dev/null", O_RDWR);
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}
