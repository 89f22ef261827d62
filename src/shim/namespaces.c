/* Namespaces of an isolated task (see isolation.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "isolation.h"
#include "shim_protocol.h"

static int parse_u64(const char *s, int base, unsigned long long *out)
{
    unsigned long long v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        int d;
        if (*s >= '0' && *s <= '9') d = *s - '0';
        else if (base == 16 && *s >= 'a' && *s <= 'f') d = *s - 'a' + 10;
        else if (base == 16 && *s >= 'A' && *s <= 'F') d = *s - 'A' + 10;
        else return -1;
        if (v > (~0ULL - (unsigned)d) / (unsigned)base)
            return -1;
        v = v * (unsigned)base + (unsigned)d;
    }
    *out = v;
    return 0;
}

static int parse_ns(const char *v, int *host)
{
    if (strcmp(v, SHIM_NS_HOST) == 0) *host = 1;
    else if (strcmp(v, SHIM_NS_PRIVATE) == 0) *host = 0;
    else return -1;
    return 0;
}

/* "ro,private" and the like: access, then propagation. */
static int parse_volume_opts(const char *v, struct iso_volume *vol)
{
    const char *comma = strchr(v, ',');
    if (!comma)
        return -1;
    size_t n = (size_t)(comma - v);
    if (n == 2 && memcmp(v, SHIM_VOL_RO, 2) == 0) vol->read_only = 1;
    else if (n == 2 && memcmp(v, SHIM_VOL_RW, 2) == 0) vol->read_only = 0;
    else return -1;
    const char *p = comma + 1;
    if (strcmp(p, SHIM_PROP_PRIVATE) == 0) vol->prop = ISO_PROP_PRIVATE;
    else if (strcmp(p, SHIM_PROP_HOST_TO_TASK) == 0) vol->prop = ISO_PROP_HOST_TO_TASK;
    else if (strcmp(p, SHIM_PROP_BIDIRECTIONAL) == 0) vol->prop = ISO_PROP_BIDIRECTIONAL;
    else return -1;
    return 0;
}

int iso_parse_arg(struct iso_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (strcmp(a, SHIM_OPT_VOLUME) == 0) {
        if (*i + 3 >= argc || o->nvolumes >= ISO_MAX_VOLUMES)
            return -1;
        struct iso_volume *vol = &o->volumes[o->nvolumes];
        vol->src = argv[*i + 1];
        vol->dst = argv[*i + 2];
        if (vol->src[0] != '/' || vol->dst[0] != '/' ||
            parse_volume_opts(argv[*i + 3], vol) < 0)
            return -1;
        o->nvolumes++;
        *i += 3;
        return 1;
    }
    if (strcmp(a, SHIM_OPT_DEVICE) == 0) {
        if (*i + 2 >= argc || o->ndevices >= ISO_MAX_DEVICES)
            return -1;
        struct iso_device *d = &o->devices[o->ndevices];
        d->host = argv[*i + 1];
        d->task = argv[*i + 2];
        if (d->host[0] != '/' || d->task[0] != '/')
            return -1;
        o->ndevices++;
        *i += 2;
        return 1;
    }
    if (strcmp(a, SHIM_OPT_HOSTS) == 0) {
        if (*i + 2 >= argc)
            return -1;
        o->hosts_name = argv[*i + 1];
        o->hosts_address = argv[*i + 2];
        *i += 2;
        return 1;
    }
    const char **list = NULL;
    int *count = NULL;
    if (strcmp(a, SHIM_OPT_DNS_SERVER) == 0) {
        list = o->dns.servers;
        count = &o->dns.nservers;
    } else if (strcmp(a, SHIM_OPT_DNS_SEARCH) == 0) {
        list = o->dns.searches;
        count = &o->dns.nsearches;
    } else if (strcmp(a, SHIM_OPT_DNS_OPTION) == 0) {
        list = o->dns.options;
        count = &o->dns.noptions;
    }
    if (list) {
        if (*i + 1 >= argc || *count >= ISO_MAX_DNS)
            return -1;
        list[(*count)++] = argv[++*i];
        o->dns.given = 1;
        return 1;
    }
    int known = strcmp(a, SHIM_OPT_ROOT) == 0 || strcmp(a, SHIM_OPT_RO_BIND) == 0 ||
                strcmp(a, SHIM_OPT_ALLOC_DIR) == 0 || strcmp(a, SHIM_OPT_PID_NS) == 0 ||
                strcmp(a, SHIM_OPT_IPC_NS) == 0 || strcmp(a, SHIM_OPT_CAPS) == 0 ||
                strcmp(a, SHIM_OPT_NO_NEW_PRIVS) == 0 || strcmp(a, SHIM_OPT_CAP_BOUND) == 0 ||
                strcmp(a, SHIM_OPT_SECRETS_SIZE) == 0 || strcmp(a, SHIM_OPT_SECRETS_DIR) == 0;
    if (!known)
        return 0;
    if (*i + 1 >= argc)
        return -1;
    const char *v = argv[++*i];
    unsigned long long n;
    if (strcmp(a, SHIM_OPT_ROOT) == 0) {
        if (v[0] != '/') return -1;
        o->root = v;
    } else if (strcmp(a, SHIM_OPT_RO_BIND) == 0) {
        if (v[0] != '/' || o->nbinds >= ISO_MAX_BINDS) return -1;
        o->binds[o->nbinds++] = v;
    } else if (strcmp(a, SHIM_OPT_ALLOC_DIR) == 0) {
        if (v[0] != '/') return -1;
        o->alloc_dir = v;
    } else if (strcmp(a, SHIM_OPT_PID_NS) == 0) {
        return parse_ns(v, &o->pid_host) < 0 ? -1 : 1;
    } else if (strcmp(a, SHIM_OPT_IPC_NS) == 0) {
        return parse_ns(v, &o->ipc_host) < 0 ? -1 : 1;
    } else if (strcmp(a, SHIM_OPT_CAPS) == 0) {
        if (parse_u64(v, 16, &n) < 0) return -1;
        o->caps = n;
        o->have_caps = 1;
    } else if (strcmp(a, SHIM_OPT_CAP_BOUND) == 0) {
        if (parse_u64(v, 16, &n) < 0) return -1;
        o->bound = n;
        o->have_bound = 1;
    } else if (strcmp(a, SHIM_OPT_SECRETS_DIR) == 0) {
        if (v[0] != '/') return -1;
        o->secrets_dir = v;
    } else if (strcmp(a, SHIM_OPT_NO_NEW_PRIVS) == 0) {
        o->no_new_privs = strcmp(v, "1") == 0;
    } else {
        if (parse_u64(v, 10, &n) < 0 || n < 4096) return -1;
        o->secrets_size = n;
    }
    return 1;
}

unsigned long iso_clone_flags(const struct iso_opts *o)
{
    return o->root && !o->pid_host ? CLONE_NEWPID : 0;
}

/* A cgroup namespace of its own too (issue 32): the child is in its scope
 * by now (released only once systemd put it there), which becomes the
 * root of what it sees in /proc/self/cgroup and in the cgroup tree the
 * root step mounts; another task's scope, alloc and name are not shown. */
int iso_unshare(const struct iso_opts *o, const char **step)
{
    *step = "unshare";
    int flags = CLONE_NEWNS | CLONE_NEWCGROUP | (o->ipc_host ? 0 : CLONE_NEWIPC);
    return unshare(flags) < 0 ? errno : 0;
}
