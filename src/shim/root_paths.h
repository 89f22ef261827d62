/*
 * Paths in the task's root while it is built (rootfs.c's steps, the cgroup
 * mounts): every path in it is resolved inside it (openat2
 * RESOLVE_IN_ROOT from its fd), so a symlink there leads nowhere out of it;
 * what the scheduler hands in from outside (the task dir itself, alloc/,
 * secrets/, volume sources) is opened once without following a symlink
 * (safe_open.h) and used through its fd. Every function returns 0 (or an
 * fd) or an errno (-errno for those that return an fd).
 */
#ifndef TASKSCOPE_SHIM_ROOT_PATHS_H
#define TASKSCOPE_SHIM_ROOT_PATHS_H

#include <sys/types.h>

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

/* The task dir after its bind onto itself (step root-bind), -1 before. */
extern int iso_root_fd;

/* "/usr/share" -> "usr/share": paths relative to the new root (cwd). */
const char *root_rel(const char *abs);

/* An O_PATH fd of a path in the root, or -errno. */
int root_resolve(const char *p, int flags);

/* The directory holding the last component of p (resolved in the root),
 * and that component's name; -errno when p is empty or ends in "/". */
int root_parent(const char *p, const char **name);

/* mkdir of the last component of p, its parent resolved in the root; an
 * existing entry of that name is fine. */
int root_mkdir(const char *p, mode_t mode);

/* mkdir -p of a path relative to the root; the last component too when
 * last is set. */
int root_mkdir_parents(const char *p, int last, mode_t mode);

/* A mount point of the same kind as the source: a dir or an empty file. */
int root_mountpoint(const char *p, int dir);

/* mount(2) onto a path of the root, resolved in it. */
int root_mount(const char *src, const char *dst, const char *type, unsigned long flags, const void *data);

/* Read-only for the whole subtree of a mount in the root. */
int root_readonly(const char *p);

/* A recursive bind of src (a host path) at dst, read-only if asked. */
int root_bind(const char *src, const char *dst, int read_only);

/* A directory (dir set) or any file the scheduler handed in, opened O_PATH
 * once with no symlink followed anywhere in its path; -errno. */
int root_open_source(const char *path, int dir);

/* A bind of an opened source onto a path of the root. */
int root_bind_fd(int src, const char *dst, unsigned long flags);

/* cgroup_mounts.c: the task's own cgroup tree at sys/fs/cgroup. */
int root_mount_cgroups(void);

#endif
