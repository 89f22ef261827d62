/*
 * The task's root (issue 14): built in the task child's own mount
 * namespace under the task dir, entered with pivot_root.
 *
 * Host paths come in as read-only bind mounts, never copies or links:
 * Nomad's copied chroot filled disks and took minutes for a large /usr
 * (#1478 #2228 #2562 #18367); a bind costs the same whatever the size of
 * the tree and no disk beyond the empty mount points.
 *
 * Once the task dir is bound onto itself, the child works relative to it
 * (cwd = the new root), so no step needs a PATH_MAX copy of a joined path.
 * The steps run in the order of the table at the bottom; each returns 0 or
 * an errno, and the table's name of the failing one goes to the manager.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "isolation.h"
#include "safe_open.h"
#include "shim_text.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442 /* the same number on every architecture */
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#define ISO_MOUNT_ATTR_RDONLY 0x00000001ULL
#define ISO_OPEN_TREE_CLONE 1
#define ISO_MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#define ISO_MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

struct iso_mount_attr {
    uint64_t attr_set;
    uint64_t attr_clr;
    uint64_t propagation;
    uint64_t userns_fd;
};

/* "/usr/share" -> "usr/share": paths relative to the new root (cwd). */
static const char *rel(const char *abs)
{
    while (*abs == '/')
        abs++;
    return *abs ? abs : ".";
}

/* Small formatter for mount options: no stdio in the shim. */
static void cat_str(char *d, size_t cap, size_t *len, const char *s)
{
    while (*s && *len + 1 < cap)
        d[(*len)++] = *s++;
    d[*len] = '\0';
}

static void cat_u64(char *d, size_t cap, size_t *len, unsigned long long v)
{
    char s[24];
    shim_format_u64(s, v);
    cat_str(d, cap, len, s);
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

static int root_fd = -1; /* the task dir after its bind onto itself */

/* An O_PATH fd of a path in the root, or -errno. */
static int resolve(const char *p, int flags)
{
    struct iso_open_how how = {(uint64_t)(O_PATH | O_CLOEXEC | flags), 0,
                               ISO_RESOLVE_IN_ROOT | ISO_RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, root_fd, p, &how, sizeof how);
    return fd < 0 ? -errno : fd;
}

/* The directory holding the last component of p (resolved in the root),
 * and that component's name; -errno when p is empty or ends in "/". */
static int parent_of(const char *p, const char **name)
{
    const char *slash = strrchr(p, '/');
    *name = slash ? slash + 1 : p;
    if (!**name)
        return -EINVAL;
    if (!slash)
        return resolve(".", O_DIRECTORY);
    char b[PATH_MAX];
    size_t n = (size_t)(slash - p);
    if (n >= sizeof b)
        return -ENAMETOOLONG;
    memcpy(b, p, n);
    b[n] = '\0';
    return resolve(n ? b : ".", O_DIRECTORY);
}

/* mkdir of the last component of p, its parent resolved in the root;
 * an existing entry of that name (a dir, or a link that resolves inside
 * the root later) is fine. */
static int mkdir_one(const char *p, mode_t mode)
{
    const char *name;
    int dir = parent_of(p, &name);
    if (dir < 0)
        return -dir;
    int e = mkdirat(dir, name, mode) == 0 || errno == EEXIST ? 0 : errno;
    close(dir);
    return e;
}

/* mkdir -p of a path relative to the root; the last component too when
 * last is set. */
static int mkdir_parents(const char *p, int last, mode_t mode)
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
        int e = mkdir_one(b, 0755);
        b[i] = '/';
        if (e)
            return e;
    }
    return last ? mkdir_one(b, mode) : 0;
}

/* A mount point of the same kind as the source: a dir or an empty file. */
static int make_mountpoint(const char *p, int dir)
{
    int e = mkdir_parents(p, dir, 0755);
    if (e || dir)
        return e;
    const char *name;
    int pd = parent_of(p, &name);
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
static int mount_in_root(const char *src, const char *dst, const char *type, unsigned long flags,
                         const void *data)
{
    int fd = resolve(dst, 0);
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
static int make_readonly(const char *p)
{
    struct iso_mount_attr a = {ISO_MOUNT_ATTR_RDONLY, 0, 0, 0};
    int fd = resolve(p, 0);
    if (fd < 0)
        return -fd;
    int e = syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) == 0 ? 0 : errno;
    close(fd);
    if (e != ENOSYS)
        return e;
    return mount_in_root(NULL, p, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL);
}

static int bind(const char *src, const char *dst, int read_only)
{
    int e = mount_in_root(src, dst, NULL, MS_BIND | MS_REC, NULL);
    if (e)
        return e;
    return read_only ? make_readonly(dst) : 0;
}

/* ---- the steps ---- */

/* Propagation. A bidirectional volume must be a peer of its host mount
 * while nothing else mounted here reaches the host. Both cannot come from
 * one tree: a recursive rslave of "/" (what this step did first) turns the
 * copy of the volume's source into a slave, which never sends, and leaving
 * the tree shared would send the root bind and all below it to the host.
 * So the volumes are taken out first, as detached copies of their sources
 * (open_tree, step_volume_trees): a copy of a shared mount is its peer and
 * stays one whatever happens to the tree afterwards. Then the tree goes
 * rslave as before: host mounts made later still reach the task's binds,
 * and nothing made here reaches the host. */
static int step_propagation(const struct iso_opts *o)
{
    (void)o;
    return mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 ? errno : 0;
}

/* A directory the scheduler handed in (the task dir, alloc_dir,
 * secrets_dir, a volume source), opened once without following a symlink
 * anywhere in its path (safe_open.h): what is mounted is what the path
 * names, never where a link a task planted points. */
static int open_source(const char *path, int dir)
{
    int fd = open_no_symlinks(path, O_PATH | (dir ? O_DIRECTORY : 0));
    return fd < 0 ? -errno : fd;
}

/* A bind of an opened source onto a path of the root. */
static int bind_fd(int src, const char *dst, unsigned long flags)
{
    char b[32];
    return mount_in_root(fd_path(b, src), dst, NULL, MS_BIND | flags, NULL);
}

static int same_inode(int a, int b)
{
    struct stat sa, sb;
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* pivot_root needs the new root to be a mount point. The bind is entered
 * by opening the path again (an fd opened before names the directory
 * below the new mount), checked to be the same directory. */
static int step_root_bind(const struct iso_opts *o)
{
    char b[32];
    int src = open_source(o->root, 1);
    if (src < 0)
        return -src;
    int e = mount(fd_path(b, src), fd_path(b, src), NULL, MS_BIND, NULL) < 0 ? errno : 0;
    int top = e ? -1 : open_source(o->root, 1);
    if (!e && top < 0)
        e = -top;
    if (!e && !same_inode(src, top))
        e = EXDEV; /* the task dir was swapped while it was bound */
    if (!e && fchdir(top) < 0)
        e = errno;
    close(src);
    if (top >= 0)
        close(top);
    if (e)
        return e;
    root_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    return root_fd < 0 ? errno : 0;
}

/* A symlink on the host (merged /usr: /bin -> usr/bin) is the same
 * symlink in the root; a missing path is skipped, as Nomad does. */
static int step_chroot_env(const struct iso_opts *o)
{
    for (int i = 0; i < o->nbinds; i++) {
        const char *src = o->binds[i];
        const char *dst = rel(src);
        struct stat st;
        if (lstat(src, &st) < 0) {
            if (errno == ENOENT)
                continue;
            return errno;
        }
        if (S_ISLNK(st.st_mode)) {
            char t[PATH_MAX];
            ssize_t n = readlink(src, t, sizeof t - 1);
            if (n < 0)
                return errno;
            t[n] = '\0';
            int e = mkdir_parents(dst, 0, 0755);
            if (e)
                return e;
            const char *name;
            int pd = parent_of(dst, &name);
            if (pd < 0)
                return -pd;
            e = symlinkat(t, pd, name) < 0 && errno != EEXIST ? errno : 0;
            close(pd);
            if (e)
                return e;
            continue;
        }
        int e = make_mountpoint(dst, S_ISDIR(st.st_mode));
        if (!e)
            e = bind(src, dst, 1);
        if (e)
            return e;
    }
    return 0;
}

/* Nomad's task dir layout. local/ is the task's; tmp/ is everyone's. */
static int step_task_dirs(const struct iso_opts *o)
{
    int e;
    if ((e = mkdir_one("local", 0755)) || (e = mkdir_one("tmp", 01777)) ||
        (e = mkdir_one("alloc", 0755)))
        return e;
    int local = resolve("local", O_DIRECTORY), tmp = resolve("tmp", O_DIRECTORY);
    char b[32];
    e = local < 0 ? -local : tmp < 0 ? -tmp : 0;
    if (!e && (fchownat(local, "", o->uid, o->gid, AT_EMPTY_PATH) < 0 || chmod(fd_path(b, tmp), 01777) < 0))
        e = errno;
    if (local >= 0)
        close(local);
    if (tmp >= 0)
        close(tmp);
    if (e)
        return e;
    if (!o->alloc_dir)
        return 0;
    int src = open_source(o->alloc_dir, 1);
    if (src < 0)
        return -src;
    e = bind_fd(src, "alloc", MS_REC);
    close(src);
    return e;
}

/* Secrets never touch the disk and are the task user's alone. A scheduler
 * that keeps its own secrets dir (Nomad mounts a tmpfs there and renders
 * templates and tokens into it) has it bound instead: bound before any
 * tmpfs could cover it, as it usually lies in the task dir itself. */
static int step_secrets(const struct iso_opts *o)
{
    int e = mkdir_one("secrets", 0700);
    if (e)
        return e;
    if (o->secrets_dir) {
        int src = open_source(o->secrets_dir, 1);
        if (src < 0)
            return -src;
        e = bind_fd(src, "secrets", 0);
        close(src);
        if (e)
            return e;
        return mount_in_root(NULL, "secrets", NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    }
    char opt[128];
    size_t n = 0;
    cat_str(opt, sizeof opt, &n, "size=");
    cat_u64(opt, sizeof opt, &n, o->secrets_size ? o->secrets_size : 1024 * 1024);
    cat_str(opt, sizeof opt, &n, ",mode=0700,uid=");
    cat_u64(opt, sizeof opt, &n, o->uid);
    cat_str(opt, sizeof opt, &n, ",gid=");
    cat_u64(opt, sizeof opt, &n, o->gid);
    return mount_in_root("tmpfs", "secrets", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opt);
}

/* Mounted by the child itself, which is pid 1 of its new pid namespace:
 * the proc it sees shows that namespace only. */
static int step_proc(const struct iso_opts *o)
{
    (void)o;
    int e = mkdir_one("proc", 0555);
    if (e)
        return e;
    return mount_in_root("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
static const char *const dev_links[][2] = {
    {"/proc/self/fd", "dev/fd"},     {"/proc/self/fd/0", "dev/stdin"},
    {"/proc/self/fd/1", "dev/stdout"}, {"/proc/self/fd/2", "dev/stderr"},
    {"pts/ptmx", "dev/ptmx"},
};

/* A private /dev with the standard nodes bound from the host (the scope's
 * DevicePolicy=closed decides what may be opened; mknod is not needed). */
static int step_dev(const struct iso_opts *o)
{
    (void)o;
    int e = mkdir_one("dev", 0755);
    if (e)
        return e;
    if ((e = mount_in_root("tmpfs", "dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=65536k")))
        return e;
    for (size_t i = 0; i < sizeof dev_nodes / sizeof dev_nodes[0]; i++) {
        char src[32] = "/dev/", dst[32] = "dev/";
        strcat(src, dev_nodes[i]);
        strcat(dst, dev_nodes[i]);
        struct stat st;
        if (stat(src, &st) < 0)
            continue; /* a host without /dev/tty and the like */
        if ((e = make_mountpoint(dst, 0)) || (e = bind(src, dst, 0)))
            return e;
    }
    int dev = resolve("dev", O_DIRECTORY);
    if (dev < 0)
        return -dev;
    for (size_t i = 0; i < sizeof dev_links / sizeof dev_links[0] && !e; i++)
        if (symlinkat(dev_links[i][0], dev, dev_links[i][1] + 4) < 0 && errno != EEXIST)
            e = errno;
    close(dev);
    return e;
}

static int step_dev_pts(const struct iso_opts *o)
{
    (void)o;
    int e = mkdir_one("dev/pts", 0755);
    if (e)
        return e;
    return mount_in_root("devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                         "newinstance,ptmxmode=0666,mode=0620,gid=5");
}

static int step_dev_shm(const struct iso_opts *o)
{
    (void)o;
    int e = mkdir_one("dev/shm", 01777);
    if (e)
        return e;
    return mount_in_root("shm", "dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=65536k");
}

static int step_dev_mqueue(const struct iso_opts *o)
{
    (void)o;
    int e = mkdir_one("dev/mqueue", 0755);
    if (e)
        return e;
    return mount_in_root("mqueue", "dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

#define ISO_CGROUP2_MAGIC 0x63677270
#define ISO_CGROUP_MAGIC 0x27e0eb
#define ISO_SYSFS_MAGIC 0x62656572

/* cgroup v1 and hybrid: a tmpfs laid out like the host's /sys/fs/cgroup,
 * each hierarchy mounted again from inside the task's cgroup namespace
 * (its root there is the task's cgroup in that hierarchy), each link
 * (cpu -> cpu,cpuacct) made again, all made read-only at the end (per
 * mount: the superblock is the host's, mounted read-write; asking for a
 * read-only one is EBUSY, so runc remounts too). A hierarchy is mounted by the name of
 * its directory, which systemd makes its controller list ("systemd" is
 * name=systemd, "unified" the cgroup2 of hybrid); one that refuses that
 * name is left out: the task sees no cgroup rather than the host's. */
static int mount_cgroups_v1(void)
{
    int e = mount_in_root("tmpfs", "sys/fs/cgroup", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755,size=64k");
    if (e)
        return e;
    int host = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int mine = resolve("sys/fs/cgroup", O_DIRECTORY);
    e = host < 0 ? errno : mine < 0 ? -mine : 0;
    char d[2048];
    long n = 0;
    while (!e && (n = syscall(SYS_getdents64, host, d, sizeof d)) > 0) {
        for (long off = 0; off < n && !e;) {
            /* struct linux_dirent64: ino(8) off(8) reclen(2) type(1) name */
            unsigned short reclen;
            memcpy(&reclen, d + off + 16, sizeof reclen);
            const char *name = d + off + 19;
            off += reclen;
            struct stat st;
            if (name[0] == '.' || fstatat(host, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                continue;
            if (S_ISLNK(st.st_mode)) {
                char t[256];
                ssize_t l = readlinkat(host, name, t, sizeof t - 1);
                if (l > 0) {
                    t[l] = '\0';
                    if (symlinkat(t, mine, name) < 0 && errno != EEXIST)
                        e = errno;
                }
                continue;
            }
            struct statfs fs;
            int h = openat(host, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
            int kind = h >= 0 && fstatfs(h, &fs) == 0 ? (int)fs.f_type : 0;
            if (h >= 0)
                close(h);
            if (kind != ISO_CGROUP_MAGIC && kind != ISO_CGROUP2_MAGIC)
                continue;
            if (mkdirat(mine, name, 0555) < 0 && errno != EEXIST) {
                e = errno;
                continue;
            }
            int at = openat(mine, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (at < 0) {
                e = errno;
                continue;
            }
            char b[32];
            const char *type = kind == ISO_CGROUP2_MAGIC ? "cgroup2" : "cgroup";
            const char *data = kind == ISO_CGROUP2_MAGIC ? NULL : strcmp(name, "systemd") == 0 ? "none,name=systemd" : name;
            if (mount(type, fd_path(b, at), type, MS_NOSUID | MS_NODEV | MS_NOEXEC, data) < 0)
                (void)unlinkat(mine, name, AT_REMOVEDIR);
            close(at);
        }
    }
    if (!e && n < 0)
        e = errno;
    if (host >= 0)
        close(host);
    if (mine >= 0)
        close(mine);
    return e ? e : make_readonly("sys/fs/cgroup");
}

/* The task's own cgroup tree (issue 32): it is in a cgroup namespace of its
 * own (namespaces.c), entered once it was in its scope, and a cgroup file
 * system mounted from inside that namespace shows the namespace's root,
 * the task's scope, as its root (runc does the same). Read-only, as runc
 * mounts it for a container that is not privileged: the task reads its
 * limits and usage and changes none. A host without cgroups has nothing
 * to mount. */
static int mount_cgroups(void)
{
    struct statfs fs;
    if (statfs("/sys/fs/cgroup", &fs) < 0)
        return errno == ENOENT ? 0 : errno;
    /* The bind of the host's /sys brought the host's cgroup mounts along:
     * they go first (a cgroup2 mount onto the root of one of the same
     * file system is EBUSY, and nothing of the host's tree may stay
     * below). What is left is sysfs's empty directory. */
    int at = resolve("sys/fs/cgroup", O_DIRECTORY);
    if (at < 0)
        return -at;
    struct statfs here;
    char b[32];
    int e = fstatfs(at, &here) < 0 ? errno : 0;
    if (!e && here.f_type != ISO_SYSFS_MAGIC && umount2(fd_path(b, at), MNT_DETACH) < 0)
        e = errno;
    close(at);
    if (e)
        return e;
    if (fs.f_type != ISO_CGROUP2_MAGIC)
        return mount_cgroups_v1();
    e = mount_in_root("cgroup2", "sys/fs/cgroup", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    return e ? e : make_readonly("sys/fs/cgroup");
}

/* A bind of the host's /sys shows the network devices of the namespace
 * that mounted it (the host's), whatever namespace the task is in. A task
 * that joined its allocation's network gets a sysfs of its own, mounted
 * after the setns, so /sys/class/net lists the allocation's interfaces
 * (as runc does for a container with its own netns). Either way the
 * cgroup tree below it is the task's own. */
static int step_sys(const struct iso_opts *o)
{
    int e = mkdir_one("sys", 0555);
    if (e)
        return e;
    if (!o->net_private)
        e = bind("/sys", "sys", 1);
    else if (mount("sysfs", "sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        e = errno;
    return e ? e : mount_cgroups();
}

/* runc's masked paths: /dev/null over files, an empty read-only tmpfs
 * over directories; what the kernel does not have is skipped. */
static const char *const masked[] = {
    "proc/kcore",  "proc/keys", "proc/timer_list", "proc/sched_debug", "proc/acpi",
    "proc/scsi",   "sys/firmware", "sys/devices/virtual/powercap",
};

static int step_masks(const struct iso_opts *o)
{
    (void)o;
    for (size_t i = 0; i < sizeof masked / sizeof masked[0]; i++) {
        struct stat st;
        int fd = resolve(masked[i], O_NOFOLLOW);
        if (fd == -ENOENT)
            continue;
        if (fd < 0)
            return -fd;
        int e = fstat(fd, &st) < 0 ? errno : 0;
        close(fd);
        if (!e)
            e = S_ISDIR(st.st_mode) ? mount_in_root("tmpfs", masked[i], "tmpfs",
                                                    MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=555,size=4k")
                                    : mount_in_root("/dev/null", masked[i], NULL, MS_BIND, NULL);
        if (e)
            return e;
    }
    return 0;
}

static const char *const proc_readonly[] = {"proc/sys", "proc/sysrq-trigger", "proc/irq", "proc/bus"};

static int step_proc_readonly(const struct iso_opts *o)
{
    (void)o;
    for (size_t i = 0; i < sizeof proc_readonly / sizeof proc_readonly[0]; i++) {
        int fd = resolve(proc_readonly[i], O_NOFOLLOW);
        if (fd == -ENOENT)
            continue;
        if (fd < 0)
            return -fd;
        char b[32];
        int e = mount(fd_path(b, fd), fd_path(b, fd), NULL, MS_BIND | MS_REC, NULL) < 0 ? errno : 0;
        close(fd);
        if (!e)
            e = make_readonly(proc_readonly[i]);
        if (e)
            return e;
    }
    return 0;
}

/* Detached copies of the volumes' sources (with what is mounted below
 * them), taken while our copy of the host's tree is still its peer: each
 * is then a peer of its host mount when that is shared (the manager made
 * sure of it for bidirectional ones). Kernels before 5.2 lack open_tree:
 * step_volumes binds from the (by then slave) tree instead, which serves
 * every propagation but bidirectional. The fds are CLOEXEC and closed
 * before the task's exec. */
static int volume_fd[ISO_MAX_VOLUMES];
static int volume_src[ISO_MAX_VOLUMES]; /* each source, opened once (O_PATH) */

static int step_volume_trees(const struct iso_opts *o)
{
    for (int i = 0; i < o->nvolumes; i++) {
        volume_src[i] = open_source(o->volumes[i].src, 0);
        if (volume_src[i] < 0)
            return -volume_src[i];
        volume_fd[i] = (int)syscall(SYS_open_tree, volume_src[i], "",
                                    ISO_OPEN_TREE_CLONE | O_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
        if (volume_fd[i] < 0) {
            if (errno != ENOSYS)
                return errno;
            volume_fd[i] = -1;
        }
    }
    return 0;
}

static int attach_volume(int i, const struct iso_volume *v, const char *dst)
{
    if (volume_fd[i] < 0) {
        char b[32];
        return bind(fd_path(b, volume_src[i]), dst, v->read_only);
    }
    int to = resolve(dst, 0);
    if (to < 0)
        return -to;
    int r = (int)syscall(SYS_move_mount, volume_fd[i], "", to, "",
                         ISO_MOVE_MOUNT_F_EMPTY_PATH | ISO_MOVE_MOUNT_T_EMPTY_PATH);
    int e = r < 0 ? errno : 0;
    close(to);
    close(volume_fd[i]);
    volume_fd[i] = -1;
    if (e)
        return e;
    return v->read_only ? make_readonly(dst) : 0;
}

/* Each volume's propagation is set last: bidirectional keeps the copy a
 * peer of the host mount, host-to-task makes it a slave, private cuts it
 * off. Its parent, the root, is a slave, so attaching it sends nothing. */
static int step_volumes(const struct iso_opts *o)
{
    static const unsigned long prop[] = {
        [ISO_PROP_PRIVATE] = MS_PRIVATE,
        [ISO_PROP_HOST_TO_TASK] = MS_SLAVE,
        [ISO_PROP_BIDIRECTIONAL] = MS_SHARED,
    };
    for (int i = 0; i < o->nvolumes; i++) {
        const struct iso_volume *v = &o->volumes[i];
        struct stat st;
        if (fstat(volume_src[i], &st) < 0)
            return errno;
        const char *dst = rel(v->dst);
        int e = make_mountpoint(dst, S_ISDIR(st.st_mode));
        if (!e)
            e = attach_volume(i, v, dst);
        if (e)
            return e;
        if ((e = mount_in_root(NULL, dst, NULL, MS_REC | prop[v->prop], NULL)))
            return e;
    }
    return 0;
}

/* pivot_root(".", ".") stacks the old root on the new one; detaching it
 * leaves the task nothing of the host but what was bound in. The old root
 * still holds copies of the host's mounts: made slaves once more (runc
 * does the same) their detach cannot send an unmount to the host. Which
 * of the two roots "." is after the pivot is the kernel's business, so
 * the old one is reached through an fd opened before it. */
static int step_pivot_root(const struct iso_opts *o)
{
    (void)o;
    int old = open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    if (old < 0)
        return errno;
    int e = 0;
    if (syscall(SYS_pivot_root, ".", ".") < 0 || fchdir(old) < 0 ||
        mount(NULL, ".", NULL, MS_REC | MS_SLAVE, NULL) < 0 || umount2(".", MNT_DETACH) < 0)
        e = errno;
    close(old);
    if (e)
        return e;
    return chdir("/") < 0 ? errno : 0;
}

static const struct {
    const char *name;
    int (*run)(const struct iso_opts *);
} steps[] = {
    {"volume-trees", step_volume_trees},
    {"propagation", step_propagation},
    {"root-bind", step_root_bind},
    {"chroot-env", step_chroot_env},
    {"task-dirs", step_task_dirs},
    {"secrets", step_secrets},
    {"proc", step_proc},
    {"dev", step_dev},
    {"dev-pts", step_dev_pts},
    {"dev-shm", step_dev_shm},
    {"dev-mqueue", step_dev_mqueue},
    {"sys", step_sys},
    {"masks", step_masks},
    {"proc-readonly", step_proc_readonly},
    {"volumes", step_volumes},
    {"pivot-root", step_pivot_root},
};

int iso_enter_root(const struct iso_opts *o, const char **step)
{
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        *step = steps[i].name;
        int e = steps[i].run(o);
        if (e)
            return e;
    }
    return 0;
}
