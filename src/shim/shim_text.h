/*
 * Decimal formatting for the shim's hand-built strings (reports, exit
 * records, mount options): no stdio, whose buffers cost memory per task.
 */
#ifndef TASKSCOPE_SHIM_TEXT_H
#define TASKSCOPE_SHIM_TEXT_H

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

#endif
