/* Paths in the task's root while it is built (root_paths.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "root_paths.h"
#include "safe_open.h"

struct iso_mount_attr {
    uint64_t attr_set;
    uint64_t attr_clr;
    uint64_t propagation;
    uint64_t userns_fd;
};

/* "/usr/share" -> "usr/share": paths relative to the new root (cwd). */
const char *root_rel(const char *abs)
{
    while (*abs == '/')
        abs++;
    return *abs ? abs : ".";
}

/* Paths in the root are resolved inside it (issue 14): the task dir may
 * hold symlinks, from the scheduler or from the task's last run (an
 * "evil -> /etc" in its root), and a mkdir, chown or mount through one
 * would reach the host's /etc. openat2 with RESOLVE_IN_ROOT resolves a
 * path as if the root were "/", so an absolute or ".." link stays inside;
 * the result is used as an fd (the *at calls) or, for mount(2), through
 * its /proc/self/fd magic link, as runc does. Needs Linux 5.6. */
struct iso_open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};
#define ISO_RESOLVE_NO_MAGICLINKS 0x02
#define ISO_RESOLVE_IN_ROOT 0x10

int iso_root_fd = -1; /* the task dir after its bind onto itself */

/* An O_PATH fd of a path in the root, or -errno. */
int root_resolve(const char *p, int flags)
{
    struct iso_open_how how = {(uint64_t)(O_PATH | O_CLOEXEC | flags), 0,
                               ISO_RESOLVE_IN_ROOT | ISO_RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, iso_root_fd, p, &how, sizeof how);
    return fd < 0 ? -errno : fd;
}

/* The directory holding the last component of p (resolved in the root),
 * and that component's name; -errno when p is empty or ends in "/". */
int root_parent(const char *p, const char **name)
{
    const char *slash = strrchr(p, '/');
    *name = slash ? slash + 1 : p;
    if (!**name)
        return -EINVAL;
    if (!slash)
        return root_resolve(".", O_DIRECTORY);
    char b[PATH_MAX];
    size_t n = (size_t)(slash - p);
    if (n >= sizeof b)
        return -ENAMETOOLONG;
    memcpy(b, p, n);
    b[n] = '\0';
    return root_resolve(n ? b : ".", O_DIRECTORY);
}

/* mkdir of the last component of p, its parent resolved in the root;
 * an existing entry of that name (a dir, or a link that resolves inside
 * the root later) is fine. */
int root_mkdir(const char *p, mode_t mode)
{
    const char *name;
    int dir = root_parent(p, &name);
    if (dir < 0)
        return -dir;
    int e = mkdirat(dir, name, mode) == 0 || errno == EEXIST ? 0 : errno;
    close(dir);
    return e;
}

/* mkdir -p of a path relative to the root; the last component too when
 * last is set. */
int root_mkdir_parents(const char *p, int last, mode_t mode)
{
    char b[PATH_MAX];
    size_t n = strlen(p);
    if (n >= sizeof b)
        return ENAMETOOLONG;
    memcpy(b, p, n + 1);
    for (size_t i = 1; i < n; i++) {
        if (b[i] != '/')
            continue;
        b[i] = '\0';
        int e = root_mkdir(b, 0755);
        b[i] = '/';
        if (e)
            return e;
    }
    return last ? root_mkdir(b, mode) : 0;
}

/* A mount point of the same kind as the source: a dir or an empty file. */
int root_mountpoint(const char *p, int dir)
{
    int e = root_mkdir_parents(p, dir, 0755);
    if (e || dir)
        return e;
    const char *name;
    int pd = root_parent(p, &name);
    if (pd < 0)
        return -pd;
    int fd = openat(pd, name, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    e = fd < 0 && errno != EEXIST && errno != ELOOP ? errno : 0;
    if (fd >= 0)
        close(fd);
    close(pd);
    return e;
}

/* mount(2) onto a path of the root, resolved in it. */
int root_mount(const char *src, const char *dst, const char *type, unsigned long flags,
                         const void *data)
{
    int fd = root_resolve(dst, 0);
    if (fd < 0)
        return -fd;
    char b[32];
    int e = mount(src, fd_path(b, fd), type, flags, data) < 0 ? errno : 0;
    close(fd);
    return e;
}

/* Read-only for the whole subtree: a tmpfs mounted below /usr is read-only
 * in the task too. mount_setattr (5.12) does it in one call; older kernels
 * get the top mount remounted read-only. Raw syscall: musl may lack it. */
int root_readonly(const char *p)
{
    struct iso_mount_attr a = {ISO_MOUNT_ATTR_RDONLY, 0, 0, 0};
    int fd = root_resolve(p, 0);
    if (fd < 0)
        return -fd;
    int e = syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) == 0 ? 0 : errno;
    close(fd);
    if (e != ENOSYS)
        return e;
    return root_mount(NULL, p, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL);
}

int root_bind(const char *src, const char *dst, int read_only)
{
    int e = root_mount(src, dst, NULL, MS_BIND | MS_REC, NULL);
    if (e)
        return e;
    return read_only ? root_readonly(dst) : 0;
}

/* A directory the scheduler handed in (the task dir, alloc_dir,
 * secrets_dir, a volume source), opened once without following a symlink
 * anywhere in its path (safe_open.h): what is mounted is what the path
 * names, never where a link a task planted points. */
int root_open_source(const char *path, int dir)
{
    int fd = open_no_symlinks(path, O_PATH | (dir ? O_DIRECTORY : 0));
    return fd < 0 ? -errno : fd;
}

/* A bind of an opened source onto a path of the root. */
int root_bind_fd(int src, const char *dst, unsigned long flags)
{
    char b[32];
    return root_mount(fd_path(b, src), dst, NULL, MS_BIND | flags, NULL);
}
