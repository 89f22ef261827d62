/*
 * The task's own cgroup tree (issue 32), mounted at sys/fs/cgroup of its
 * root from inside its own cgroup namespace (namespaces.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "root_paths.h"
#include "safe_open.h"

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
    int e = root_mount("tmpfs", "sys/fs/cgroup", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755,size=64k");
    if (e)
        return e;
    int host = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int mine = root_resolve("sys/fs/cgroup", O_DIRECTORY);
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
    return e ? e : root_readonly("sys/fs/cgroup");
}

/* The task's own cgroup tree (issue 32): it is in a cgroup namespace of its
 * own (namespaces.c), entered once it was in its scope, and a cgroup file
 * system mounted from inside that namespace shows the namespace's root,
 * the task's scope, as its root (runc does the same). Read-only, as runc
 * mounts it for a container that is not privileged: the task reads its
 * limits and usage and changes none. A host without cgroups has nothing
 * to mount. */
int root_mount_cgroups(void)
{
    struct statfs fs;
    if (statfs("/sys/fs/cgroup", &fs) < 0)
        return errno == ENOENT ? 0 : errno;
    /* The bind of the host's /sys brought the host's cgroup mounts along:
     * they go first (a cgroup2 mount onto the root of one of the same
     * file system is EBUSY, and nothing of the host's tree may stay
     * below). What is left is sysfs's empty directory. */
    int at = root_resolve("sys/fs/cgroup", O_DIRECTORY);
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
    e = root_mount("cgroup2", "sys/fs/cgroup", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    return e ? e : root_readonly("sys/fs/cgroup");
}
