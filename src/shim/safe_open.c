/* Opening paths a task can influence (safe_open.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "safe_open.h"
#include "shim_text.h"

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif
#define SHIM_RESOLVE_NO_MAGICLINKS 0x02
#define SHIM_RESOLVE_NO_SYMLINKS 0x04

struct shim_open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};

const char *fd_path(char b[32], int fd)
{
    struct buf o = { b, 0, 32, 0 };
    b_str(&o, "/proc/self/fd/");
    b_u64(&o, (unsigned long long)fd);
    return b;
}

/* A symlink at the end, handed back by an O_PATH|O_NOFOLLOW open, is
 * refused like one on the way. */
static int refuse_link(int fd)
{
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
        close(fd);
        errno = ELOOP;
        return -1;
    }
    return fd;
}

/* Kernels before 5.6: one component at a time, each opened O_PATH and
 * O_NOFOLLOW and looked at, which refuses what RESOLVE_NO_SYMLINKS does. */
static int walk(const char *path, int flags)
{
    int at = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    const char *p = path;
    while (at >= 0) {
        while (*p == '/')
            p++;
        const char *e = p;
        while (*e && *e != '/')
            e++;
        char name[NAME_MAX + 1];
        size_t n = (size_t)(e - p);
        if (n > NAME_MAX) {
            close(at);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(name, n ? p : ".", n ? n : 1);
        name[n ? n : 1] = '\0';
        const char *rest = e;
        while (*rest == '/')
            rest++;
        if (!*rest) {
            int fd = openat(at, name, flags | O_NOFOLLOW | O_CLOEXEC, 0);
            int err = errno;
            close(at);
            errno = err;
            return (flags & O_PATH) ? refuse_link(fd) : fd;
        }
        int next = refuse_link(openat(at, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
        int err = errno;
        close(at);
        errno = err;
        at = next;
        p = e;
    }
    return -1;
}

int open_no_symlinks(const char *path, int flags)
{
    if (path[0] != '/') {
        errno = EINVAL;
        return -1;
    }
    struct shim_open_how how = { (uint64_t)(flags | O_CLOEXEC), 0,
                                 SHIM_RESOLVE_NO_SYMLINKS | SHIM_RESOLVE_NO_MAGICLINKS };
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd < 0 && errno == ENOSYS)
        return walk(path, flags);
    return (flags & O_PATH) ? refuse_link(fd) : fd;
}

static const struct {
    int fifo_flags; /* how a fifo is opened; every kind takes one */
    int files;      /* a regular file or /dev/null is taken too */
    int file_flags; /* and opened so */
    int create;     /* nothing there: a new regular file */
} kinds[] = {
    [STREAM_OUT] = { O_RDWR, 1, O_WRONLY | O_APPEND, 1 },
    [STREAM_IN] = { O_RDONLY, 1, O_RDONLY, 0 },
    [STREAM_HOLD] = { O_RDWR | O_NONBLOCK, 0, 0, 0 },
    [STREAM_RELEASE] = { O_RDONLY | O_NONBLOCK, 0, 0, 0 },
};

/* 0, or the errno that refuses what was found (safe_open.h). */
static int check_stream(const struct stat *st, enum stream kind, uid_t task_uid, int *flags)
{
    int null_dev = S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 3;
    if (S_ISLNK(st->st_mode))
        return ELOOP;
    if (S_ISDIR(st->st_mode))
        return EISDIR;
    if (S_ISFIFO(st->st_mode))
        *flags = kinds[kind].fifo_flags;
    else if ((S_ISREG(st->st_mode) || null_dev) && kinds[kind].files)
        *flags = kinds[kind].file_flags;
    else
        return ENXIO;
    if (null_dev)
        return 0;
    if (st->st_uid != geteuid() && st->st_uid != task_uid)
        return EPERM;
    return st->st_nlink == 1 ? 0 : EMLINK;
}

/* A new regular file where there was nothing: created in its directory,
 * opened without following a symlink, with O_EXCL, which never follows one
 * either. -1 with EEXIST when something appeared meanwhile. */
static int create_output(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    size_t n = (size_t)(slash - path);
    if (n >= sizeof dir || !slash[1]) {
        errno = n >= sizeof dir ? ENAMETOOLONG : EISDIR;
        return -1;
    }
    memcpy(dir, path, n ? n : 1);
    dir[n ? n : 1] = '\0';
    int d = open_no_symlinks(dir, O_PATH | O_DIRECTORY);
    if (d < 0)
        return -1;
    int fd = openat(d, slash + 1, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
                    0600);
    int err = errno;
    close(d);
    errno = err;
    return fd;
}

int open_stream(const char *path, enum stream kind, uid_t task_uid)
{
    /* Three looks: something made between a look and a creation is looked
     * at again; a task that keeps racing gets EEXIST. */
    for (int tries = 0; tries < 3; tries++) {
        int p = open_no_symlinks(path, O_PATH | O_NOFOLLOW);
        if (p < 0) {
            if (errno != ENOENT || !kinds[kind].create)
                return -1;
            int fd = create_output(path);
            if (fd >= 0 || errno != EEXIST)
                return fd;
            continue;
        }
        struct stat st;
        int flags = 0;
        int e = fstat(p, &st) < 0 ? errno : check_stream(&st, kind, task_uid, &flags);
        if (e) {
            close(p);
            errno = e;
            return -1;
        }
        /* The very inode looked at, opened through the fd: never the name
         * again, which the task may have changed meanwhile. */
        char b[32];
        int fd = open(fd_path(b, p), flags | O_CLOEXEC | O_NOCTTY);
        e = errno;
        close(p);
        errno = e;
        return fd;
    }
    errno = EEXIST;
    return -1;
}
