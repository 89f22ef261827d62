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
#include "root_paths.h"
#include "safe_open.h"
#include "shim_text.h"

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

static int same_inode(int a, int b)
{
    struct stat sa, sb;
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
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

/* pivot_root needs the new root to be a mount point. The bind is entered
 * by opening the path again (an fd opened before names the directory
 * below the new mount), checked to be the same directory. */
static int step_root_bind(const struct iso_opts *o)
{
    char b[32];
    int src = root_open_source(o->root, 1);
    if (src < 0)
        return -src;
    int e = mount(fd_path(b, src), fd_path(b, src), NULL, MS_BIND, NULL) < 0 ? errno : 0;
    int top = e ? -1 : root_open_source(o->root, 1);
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
    iso_root_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    return iso_root_fd < 0 ? errno : 0;
}

/* A symlink on the host (merged /usr: /bin -> usr/bin) is the same
 * symlink in the root; a missing path is skipped, as Nomad does. */
static int step_chroot_env(const struct iso_opts *o)
{
    for (int i = 0; i < o->nbinds; i++) {
        const char *src = o->binds[i];
        const char *dst = root_rel(src);
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
            int e = root_mkdir_parents(dst, 0, 0755);
            if (e)
                return e;
            const char *name;
            int pd = root_parent(dst, &name);
            if (pd < 0)
                return -pd;
            e = symlinkat(t, pd, name) < 0 && errno != EEXIST ? errno : 0;
            close(pd);
            if (e)
                return e;
            continue;
        }
        int e = root_mountpoint(dst, S_ISDIR(st.st_mode));
        if (!e)
            e = root_bind(src, dst, 1);
        if (e)
            return e;
    }
    return 0;
}

/* Nomad's task dir layout. local/ is the task's; tmp/ is everyone's. */
static int step_task_dirs(const struct iso_opts *o)
{
    int e;
    if ((e = root_mkdir("local", 0755)) || (e = root_mkdir("tmp", 01777)) ||
        (e = root_mkdir("alloc", 0755)))
        return e;
    int local = root_resolve("local", O_DIRECTORY), tmp = root_resolve("tmp", O_DIRECTORY);
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
    int src = root_open_source(o->alloc_dir, 1);
    if (src < 0)
        return -src;
    e = root_bind_fd(src, "alloc", MS_REC);
    close(src);
    return e;
}

/* Secrets never touch the disk and are the task user's alone. A scheduler
 * that keeps its own secrets dir (Nomad mounts a tmpfs there and renders
 * templates and tokens into it) has it bound instead: bound before any
 * tmpfs could cover it, as it usually lies in the task dir itself. */
static int step_secrets(const struct iso_opts *o)
{
    int e = root_mkdir("secrets", 0700);
    if (e)
        return e;
    if (o->secrets_dir) {
        int src = root_open_source(o->secrets_dir, 1);
        if (src < 0)
            return -src;
        e = root_bind_fd(src, "secrets", 0);
        close(src);
        if (e)
            return e;
        return root_mount(NULL, "secrets", NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    }
    char opt[128];
    size_t n = 0;
    cat_str(opt, sizeof opt, &n, "size=");
    cat_u64(opt, sizeof opt, &n, o->secrets_size ? o->secrets_size : 1024 * 1024);
    cat_str(opt, sizeof opt, &n, ",mode=0700,uid=");
    cat_u64(opt, sizeof opt, &n, o->uid);
    cat_str(opt, sizeof opt, &n, ",gid=");
    cat_u64(opt, sizeof opt, &n, o->gid);
    return root_mount("tmpfs", "secrets", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opt);
}

/* Mounted by the child itself, which is pid 1 of its new pid namespace:
 * the proc it sees shows that namespace only. */
static int step_proc(const struct iso_opts *o)
{
    (void)o;
    int e = root_mkdir("proc", 0555);
    if (e)
        return e;
    return root_mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
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
    int e = root_mkdir("dev", 0755);
    if (e)
        return e;
    if ((e = root_mount("tmpfs", "dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=65536k")))
        return e;
    for (size_t i = 0; i < sizeof dev_nodes / sizeof dev_nodes[0]; i++) {
        char src[32] = "/dev/", dst[32] = "dev/";
        strcat(src, dev_nodes[i]);
        strcat(dst, dev_nodes[i]);
        struct stat st;
        if (stat(src, &st) < 0)
            continue; /* a host without /dev/tty and the like */
        if ((e = root_mountpoint(dst, 0)) || (e = root_bind(src, dst, 0)))
            return e;
    }
    int dev = root_resolve("dev", O_DIRECTORY);
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
    int e = root_mkdir("dev/pts", 0755);
    if (e)
        return e;
    return root_mount("devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                         "newinstance,ptmxmode=0666,mode=0620,gid=5");
}

static int step_dev_shm(const struct iso_opts *o)
{
    (void)o;
    int e = root_mkdir("dev/shm", 01777);
    if (e)
        return e;
    return root_mount("shm", "dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=65536k");
}

static int step_dev_mqueue(const struct iso_opts *o)
{
    (void)o;
    int e = root_mkdir("dev/mqueue", 0755);
    if (e)
        return e;
    return root_mount("mqueue", "dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

/* The task's own devices (Nomad's device plugins: GPUs and the like),
 * each bound from its host node over an empty file at its place in the
 * root, as the standard nodes are; its scope's DeviceAllow= decides what
 * may be done with it. The host path is opened once without following a
 * symlink and must be a device node there (the manager checked it before
 * the start; this is the same check on what is bound), so what the task
 * gets is the node the spec named. */
static int step_devices(const struct iso_opts *o)
{
    for (int i = 0; i < o->ndevices; i++) {
        const struct iso_device *d = &o->devices[i];
        int src = root_open_source(d->host, 0);
        if (src < 0)
            return -src;
        struct stat st;
        int e = fstat(src, &st) < 0 ? errno : 0;
        if (!e && !S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
            e = ENODEV;
        const char *dst = root_rel(d->task);
        if (!e)
            e = root_mountpoint(dst, 0);
        if (!e)
            e = root_bind_fd(src, dst, 0);
        close(src);
        if (e)
            return e;
    }
    return 0;
}

/* A bind of the host's /sys shows the network devices of the namespace
 * that mounted it (the host's), whatever namespace the task is in. A task
 * that joined its allocation's network gets a sysfs of its own, mounted
 * after the setns, so /sys/class/net lists the allocation's interfaces
 * (as runc does for a container with its own netns). Either way the
 * cgroup tree below it is the task's own. */
static int step_sys(const struct iso_opts *o)
{
    int e = root_mkdir("sys", 0555);
    if (e)
        return e;
    if (!o->net_private)
        e = root_bind("/sys", "sys", 1);
    else if (mount("sysfs", "sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        e = errno;
    return e ? e : root_mount_cgroups();
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
        int fd = root_resolve(masked[i], O_NOFOLLOW);
        if (fd == -ENOENT)
            continue;
        if (fd < 0)
            return -fd;
        int e = fstat(fd, &st) < 0 ? errno : 0;
        close(fd);
        if (!e)
            e = S_ISDIR(st.st_mode) ? root_mount("tmpfs", masked[i], "tmpfs",
                                                    MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=555,size=4k")
                                    : root_mount("/dev/null", masked[i], NULL, MS_BIND, NULL);
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
        int fd = root_resolve(proc_readonly[i], O_NOFOLLOW);
        if (fd == -ENOENT)
            continue;
        if (fd < 0)
            return -fd;
        char b[32];
        int e = mount(fd_path(b, fd), fd_path(b, fd), NULL, MS_BIND | MS_REC, NULL) < 0 ? errno : 0;
        close(fd);
        if (!e)
            e = root_readonly(proc_readonly[i]);
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
        volume_src[i] = root_open_source(o->volumes[i].src, 0);
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
        return root_bind(fd_path(b, volume_src[i]), dst, v->read_only);
    }
    int to = root_resolve(dst, 0);
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
    return v->read_only ? root_readonly(dst) : 0;
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
        const char *dst = root_rel(v->dst);
        int e = root_mountpoint(dst, S_ISDIR(st.st_mode));
        if (!e)
            e = attach_volume(i, v, dst);
        if (e)
            return e;
        if ((e = root_mount(NULL, dst, NULL, MS_REC | prop[v->prop], NULL)))
            return e;
    }
    return 0;
}

/* After the volumes: a volume at /etc must not cover them. */
static int step_net_files(const struct iso_opts *o)
{
    return iso_net_files(o);
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
    {"devices", step_devices},
    {"sys", step_sys},
    {"masks", step_masks},
    {"proc-readonly", step_proc_readonly},
    {"volumes", step_volumes},
    {"net-files", step_net_files},
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
