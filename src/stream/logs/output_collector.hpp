#pragma once
// What the streamer asks of one stream of one task, wherever its output
// goes: rotated files (collector.hpp) or the paths the task was started
// with, such as Nomad's log fifos (forward_collector.hpp). Both read the
// spool fifo without blocking, hand every byte to an optional tee (the
// journal's copy), and say when the fifo is empty or the way out is full.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "common/result.hpp"

namespace taskscope::stream::logs {

class OutputCollector {
public:
    using Clock = std::chrono::steady_clock;

    virtual ~OutputCollector() = default;

    struct Drained {
        uint64_t moved = 0;                   ///< bytes delivered
        bool empty = false;                   ///< the fifo had no more (EAGAIN)
        bool blocked = false;                 ///< the way out is full: wait for blockedOn() to take more
        std::optional<common::Error> failed;  ///< writing just started failing: data is dropped from now on
        uint64_t recoveredAfterDropping = 0;  ///< writing works again; that many bytes were dropped
    };

    /// Moves at most budget bytes; call again while neither empty nor blocked.
    virtual Drained drain(uint64_t budget, Clock::time_point now = Clock::now()) = 0;

    /// The spool fifo's read end.
    virtual int fifoFd() const = 0;

    /// After drain() said blocked: the fd whose POLLOUT means room again.
    virtual int blockedOn() const { return -1; }

    /// The task has ended and its way out stays full: what is left is
    /// dropped (and counted) so that its logs can complete.
    virtual void giveUp() {}

    /// Bytes dropped since the last recovery (not delivered).
    virtual uint64_t dropped() const { return 0; }

    /// Also hands every byte taken from the fifo to `tee` (the journal's
    /// copy), after the way out has it. Unset: no cost at all.
    void setTee(std::function<void(const char*, size_t)> tee) { tee_ = std::move(tee); }

protected:
    /// Reads and drops what `fifo` holds until `spent` reaches budget; the
    /// tee still gets it (the journal may take what the way out cannot).
    /// Adds what it read to spent and to dropped; true once it is empty.
    bool discardUpTo(int fifo, uint64_t budget, uint64_t& spent, uint64_t& dropped);

    std::function<void(const char*, size_t)> tee_;
};

}  // namespace taskscope::stream::logs
