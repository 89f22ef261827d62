#pragma once
// PID 1's CPU time, for benchmarks that charge systemd's work per task.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bench {

/// PID 1's user and system CPU time so far, in seconds (0 when unreadable).
inline double pid1CpuSeconds() {
    FILE* f = std::fopen("/proc/1/stat", "r");
    if (!f) return 0;
    char buf[1024];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = 0;
    const char* p = std::strrchr(buf, ')');
    if (!p) return 0;
    // Fields after the comm: state is field 3; utime and stime are 14 and 15.
    unsigned long long utime = 0, stime = 0;
    int field = 2;
    for (const char* q = p + 1; *q && field < 15;) {
        while (*q == ' ') ++q;
        ++field;
        if (field == 14) utime = std::strtoull(q, nullptr, 10);
        if (field == 15) stime = std::strtoull(q, nullptr, 10);
        while (*q && *q != ' ') ++q;
    }
    return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

}  // namespace bench
