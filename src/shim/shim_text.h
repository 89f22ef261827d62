/*
 * Text for the shim's hand-built strings (reports, exit records, mount
 * options) and its few numbers to parse: no stdio, whose buffers cost
 * memory per task, and no strtoul, whose locale and errno it does not need.
 */
#ifndef TASKSCOPE_SHIM_TEXT_H
#define TASKSCOPE_SHIM_TEXT_H

#include <stddef.h>

/* Writes v in decimal to out (NUL-terminated; 21 bytes suffice for 64 bits). */
static inline void shim_format_u64(char out[24], unsigned long long v)
{
    char t[24];
    int n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    int i = 0;
    while (n)
        out[i++] = t[--n];
    out[i] = '\0';
}

/* A string built in a caller's buffer; what does not fit sets overflow
 * and is dropped, the text stays NUL-terminated. */
struct buf {
    char *p;
    size_t len;
    size_t cap;
    int overflow;
};

void b_str(struct buf *b, const char *s);
void b_u64(struct buf *b, unsigned long long v);
void b_i64(struct buf *b, long long v);

/* write(2) until all of it is written; -1 with errno on failure. */
int write_all(int fd, const char *p, size_t n);

/* a, b and a newline on fd, best effort (a message for the journal). */
void say(int fd, const char *a, const char *b);

/* A decimal number in [s, end) or in all of s; -1 when it is not one or
 * does not fit 32 bits. */
int parse_u32(const char *s, const char *end, unsigned *out);
int parse_u32z(const char *s, unsigned *out);

#endif
