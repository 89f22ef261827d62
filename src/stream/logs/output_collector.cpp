#include "stream/logs/output_collector.hpp"

#include <unistd.h>

#include <algorithm>

namespace taskscope::stream::logs {

bool OutputCollector::discardUpTo(int fifo, uint64_t budget, uint64_t& spent, uint64_t& dropped) {
    static char buf[1 << 16];
    while (spent < budget) {
        const ssize_t n = ::read(fifo, buf, static_cast<size_t>(std::min<uint64_t>(budget - spent, sizeof buf)));
        if (n <= 0) return true;  // EAGAIN: empty (we hold a write end: never EOF)
        if (tee_) tee_(buf, static_cast<size_t>(n));
        dropped += static_cast<uint64_t>(n);
        spent += static_cast<uint64_t>(n);
    }
    return false;
}

}  // namespace taskscope::stream::logs
