/*
 * Capabilities of an isolated task, in crun's order: drop the bounding set
 * and keep capabilities across the identity change (caps_before_ids), then
 * after setgroups/setgid/setuid set effective, permitted and inheritable,
 * raise the ambient set for a non-root user so the set survives execve
 * (Nomad #16642: cap_add did nothing until ambient was set), and finally
 * no_new_privs. A task on the host's root gets its bounding set cut
 * (--cap-bound) and no_new_privs, nothing else: its user keeps what it has.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "isolation.h"

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_RAISE 2
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

#define CAP_VERSION_3 0x20080522

struct cap_header {
    uint32_t version;
    int pid;
};

struct cap_data {
    uint32_t effective;
    uint32_t permitted;
    uint32_t inheritable;
};

/* The kernel's last capability is where PR_CAPBSET_DROP says EINVAL. */
static int drop_bounding(uint64_t keep)
{
    for (int c = 0; c < 64; c++) {
        if (keep & (1ULL << c))
            continue;
        if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break;
            return errno;
        }
    }
    return 0;
}

int caps_before_ids(const struct iso_opts *o, const char **step)
{
    int e;
    if (!o->have_caps) {
        /* On the host's root (--cap-bound): root's sets after execve are
         * its bounding set, anyone else has none and gains none beyond it
         * (setuid binaries, file capabilities). */
        *step = "cap-bounding";
        return o->have_bound ? drop_bounding(o->bound) : 0;
    }
    *step = "cap-bounding";
    if ((e = drop_bounding(o->caps)))
        return e;
    *step = "keep-caps";
    return prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 ? errno : 0;
}

int caps_after_ids(const struct iso_opts *o, uid_t uid, const char **step)
{
    if (o->have_caps) {
        *step = "capset";
        struct cap_header h = {CAP_VERSION_3, 0};
        struct cap_data d[2];
        for (int i = 0; i < 2; i++) {
            uint32_t v = (uint32_t)(o->caps >> (32 * i));
            d[i].effective = d[i].permitted = d[i].inheritable = v;
        }
        if (syscall(SYS_capset, &h, d) < 0)
            return errno;
        /* Root gets the bounding set on exec anyway; anyone else keeps
         * capabilities across execve only through the ambient set. */
        *step = "cap-ambient";
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
            return errno;
        if (uid != 0)
            for (int c = 0; c < 64; c++)
                if ((o->caps & (1ULL << c)) &&
                    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0)
                    return errno;
        *step = "keep-caps";
        if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
            return errno;
    }
    if (o->no_new_privs) {
        *step = "no-new-privs";
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            return errno;
    }
    return 0;
}
