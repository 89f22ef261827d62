/*
 * Isolation of a task (issue 14): the steps the task child runs between
 * fork and exec when the manager passed --root. Every step returns 0 or an
 * errno and never prints or exits; the caller reports the failing step's
 * name to the manager as "execfailed ERRNO STEP".
 */
#ifndef TASKSCOPE_SHIM_ISOLATION_H
#define TASKSCOPE_SHIM_ISOLATION_H

#include <stdint.h>
#include <sys/types.h>

/* Nomad's chroot_env has 9 entries; a node may add a few. */
#define ISO_MAX_BINDS 32
#define ISO_MAX_VOLUMES 16
/* The spec's bound (spec/task_spec_json.cpp kMaxDevices). */
#define ISO_MAX_DEVICES 64

enum iso_prop { ISO_PROP_PRIVATE, ISO_PROP_HOST_TO_TASK, ISO_PROP_BIDIRECTIONAL };

struct iso_volume {
    const char *src;
    const char *dst; /* absolute, inside the root (checked by the manager) */
    int read_only;
    enum iso_prop prop;
};

struct iso_device {
    const char *host; /* a node under /dev on the host */
    const char *task; /* absolute, inside the root (checked by the manager) */
};

/* resolv.conf words (--dns-*); the manager bounds each list (16). */
#define ISO_MAX_DNS 16
struct iso_dns {
    int given; /* any of the three: the root gets a resolv.conf of these */
    const char *servers[ISO_MAX_DNS];
    int nservers;
    const char *searches[ISO_MAX_DNS];
    int nsearches;
    const char *options[ISO_MAX_DNS];
    int noptions;
};

struct iso_opts {
    const char *root; /* NULL: not isolated */
    const char *binds[ISO_MAX_BINDS];
    int nbinds;
    const char *alloc_dir;
    struct iso_volume volumes[ISO_MAX_VOLUMES];
    int nvolumes;
    struct iso_device devices[ISO_MAX_DEVICES];
    int ndevices;
    struct iso_dns dns;
    const char *hosts_name; /* --hosts: NULL, or the root gets an etc/hosts */
    const char *hosts_address;
    int pid_host;
    int ipc_host;
    int have_caps;
    uint64_t caps;
    int have_bound; /* --cap-bound: the bounding set alone (not isolated) */
    uint64_t bound;
    int no_new_privs;
    unsigned long long secrets_size;
    int net_private; /* joined an allocation's netns (--netns): own sysfs */
    const char *secrets_dir; /* NULL: a tmpfs of secrets_size */
    uid_t uid; /* owner of secrets/ and local/ */
    gid_t gid;
};

/* Takes one option of shim_protocol.h from argv[*i] (advancing *i past its
 * values). Returns 1 when taken, 0 when not an isolation option, -1 when
 * malformed. */
int iso_parse_arg(struct iso_opts *o, int argc, char **argv, int *i);

/* Flags for the clone(2) of the task child: CLONE_NEWPID for a private pid
 * namespace, so the task is pid 1 of it. */
unsigned long iso_clone_flags(const struct iso_opts *o);

/* namespaces.c: a new mount (and ipc) namespace for the calling child. */
int iso_unshare(const struct iso_opts *o, const char **step);

/* rootfs.c: builds the root under o->root and pivots into it. */
int iso_enter_root(const struct iso_opts *o, const char **step);

/* net_files.c: the root's etc/resolv.conf and etc/hosts (--dns-*,
 * --hosts), bound over the host's; nothing when neither was given. */
int iso_net_files(const struct iso_opts *o);

/* caps.c, split around the identity change the shim does in between:
 * before drops the bounding set and keeps capabilities across setuid;
 * after sets the rest of the sets, ambient and no_new_privs. With
 * --cap-bound only the bounding set is dropped (and no_new_privs set). */
int caps_before_ids(const struct iso_opts *o, const char **step);
int caps_after_ids(const struct iso_opts *o, uid_t uid, const char **step);

#endif
