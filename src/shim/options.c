/* The shim's command line (options.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "options.h"
#include "shim_protocol.h"
#include "shim_text.h"

int parse_groups(const char *list, gid_t *out, int *n)
{
    *n = 0;
    if (!list || !*list)
        return 0;
    const char *s = list;
    for (;;) {
        const char *e = s;
        while (*e && *e != ',')
            e++;
        unsigned v;
        if (*n >= MAX_GROUPS || parse_u32(s, e, &v) < 0)
            return -1;
        out[(*n)++] = (gid_t)v;
        if (!*e)
            return 0;
        s = e + 1;
    }
}

/* One option with one value; 0 when taken, -1 when unknown or malformed. */
static int take(struct opts *o, const char *a, char *v)
{
    unsigned n;
    if (strcmp(a, SHIM_OPT_EXIT_FILE) == 0) o->exit_file = v;
    else if (strcmp(a, SHIM_OPT_CWD) == 0) o->cwd = v;
    else if (strcmp(a, SHIM_OPT_STDIN) == 0) o->stdin_path = v;
    else if (strcmp(a, SHIM_OPT_STDOUT) == 0) o->stdout_path = v;
    else if (strcmp(a, SHIM_OPT_STDERR) == 0) o->stderr_path = v;
    else if (strcmp(a, SHIM_OPT_RELEASE_FIFO) == 0) o->release_fifo = v;
    else if (strcmp(a, SHIM_OPT_FORWARD_STDOUT) == 0) o->forward_stdout = v;
    else if (strcmp(a, SHIM_OPT_FORWARD_STDERR) == 0) o->forward_stderr = v;
    else if (strcmp(a, SHIM_OPT_CGROUP_ROOT) == 0) o->cgroup_root = v;
    else if (strcmp(a, SHIM_OPT_GROUPS) == 0) o->groups = v;
    else if (strcmp(a, SHIM_OPT_NETNS) == 0) o->netns = v;
    else if (strcmp(a, SHIM_OPT_JOIN_CGROUP) == 0) {
        if (o->njoin >= MAX_JOIN) return -1;
        o->join[o->njoin++] = v;
    } else if (strcmp(a, SHIM_OPT_UID) == 0) {
        if (parse_u32z(v, &n) < 0) return -1;
        o->uid = (uid_t)n;
        o->have_uid = 1;
    } else if (strcmp(a, SHIM_OPT_GID) == 0) {
        if (parse_u32z(v, &n) < 0) return -1;
        o->gid = (gid_t)n;
        o->have_gid = 1;
    } else {
        return -1;
    }
    return 0;
}

int shim_parse_opts(int argc, char **argv, struct opts *o, int *next)
{
    memset(o, 0, sizeof *o);
    o->cgroup_root = "/sys/fs/cgroup";
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        int taken = iso_parse_arg(&o->iso, argc, argv, &i);
        if (!taken)
            taken = limits_parse_arg(&o->limits, argc, argv, &i);
        if (taken < 0)
            return -1;
        if (taken)
            continue;
        /* The one option without a value. */
        if (strcmp(a, SHIM_OPT_KEEP_TASK_ZOMBIE) == 0) {
            o->keep_task_zombie = 1;
            continue;
        }
        if (i + 1 >= argc || take(o, a, argv[i + 1]) < 0)
            return -1;
        i++;
    }
    o->iso.uid = o->uid;
    o->iso.gid = o->gid;
    o->iso.net_private = o->netns != NULL;
    *next = i;
    return !o->cwd || !o->have_uid || !o->have_gid ? -1 : 0;
}

int shim_parse_command(int argc, char **argv, struct opts *o)
{
    int i;
    if (shim_parse_opts(argc, argv, o, &i) < 0)
        return -1;
    if (i + 1 >= argc || !o->exit_file || !*o->exit_file)
        return -1;
    if ((o->keep_task_zombie || o->forward_stdout || o->forward_stderr) && !o->release_fifo)
        return -1;
    o->prog = argv[i];
    o->argv = &argv[i + 1];
    return 0;
}

int shim_parse_spec(char *text, size_t len, char **argv, int max_words, struct opts *o)
{
    text[len] = '\0';
    /* NUL-separated words, parsed as the shim's own argv (argv[0] first). */
    int argc = 0;
    argv[argc++] = "spec";
    for (size_t i = 0; i < len; i += strlen(text + i) + 1) {
        if (argc > max_words)
            return E2BIG;
        argv[argc++] = text + i;
    }
    argv[argc] = NULL;
    int next;
    return shim_parse_opts(argc, argv, o, &next) < 0 || next != argc ? EINVAL : 0;
}
