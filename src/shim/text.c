/* The shim's text helpers (shim_text.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shim_text.h"

void b_str(struct buf *b, const char *s)
{
    while (*s) {
        if (b->len + 1 >= b->cap) { /* keep room for a terminating NUL */
            b->overflow = 1;
            return;
        }
        b->p[b->len++] = *s++;
    }
    b->p[b->len] = '\0';
}

void b_u64(struct buf *b, unsigned long long v)
{
    char s[24];
    shim_format_u64(s, v);
    b_str(b, s);
}

void b_i64(struct buf *b, long long v)
{
    if (v < 0) {
        b_str(b, "-");
        b_u64(b, (unsigned long long)(-(v + 1)) + 1);
    } else {
        b_u64(b, (unsigned long long)v);
    }
}

int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

void say(int fd, const char *a, const char *b)
{
    char m[256];
    struct buf o = { m, 0, sizeof m, 0 };
    b_str(&o, a);
    b_str(&o, b);
    b_str(&o, "\n");
    (void)write_all(fd, m, o.len);
}

int parse_u32(const char *s, const char *end, unsigned *out)
{
    unsigned long long v = 0;
    if (s == end)
        return -1;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (unsigned)(*s - '0');
        if (v > 0xffffffffULL)
            return -1;
    }
    *out = (unsigned)v;
    return 0;
}

int parse_u32z(const char *s, unsigned *out)
{
    return parse_u32(s, s + strlen(s), out);
}
