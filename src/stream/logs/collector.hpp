#pragma once
// One stream of one task: the streamer's end of the fifo and the rotated
// files it fills. Data moves fifo -> file with splice(2), so it never
// passes through user space and is in the file (page cache) the moment
// splice returns: a crash between two calls loses nothing. Writes stop at
// rotation boundaries. When the log directory cannot be written (a full
// disk), the fifo is still drained and the data dropped, so the task never
// blocks forever; writing is retried at most once a second.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "stream/logs/rotator.hpp"

namespace taskscope::stream::logs {

class StreamCollector {
public:
    using Clock = std::chrono::steady_clock;

    StreamCollector(common::UniqueFd fifo, Rotator rotator) : fifo_(std::move(fifo)), rotator_(std::move(rotator)) {}

    /// Opens the current log file.
    common::Result<void> open() { return rotator_.open(); }

    struct Drained {
        uint64_t moved = 0;                   ///< bytes written to files
        bool empty = false;                   ///< the fifo had no more (EAGAIN)
        std::optional<common::Error> failed;  ///< writing just started failing: data is dropped from now on
        uint64_t recoveredAfterDropping = 0;  ///< writing works again; that many bytes were dropped
    };

    /// Moves at most budget bytes; call again while !empty.
    Drained drain(uint64_t budget, Clock::time_point now = Clock::now());

    /// Also hands every byte taken from the fifo to `tee` (the journal's
    /// copy), after the file has it; the bytes read back from the page
    /// cache, since splice moved them without us. Unset: no cost at all.
    void setTee(std::function<void(const char*, size_t)> tee) { tee_ = std::move(tee); }

    int fifoFd() const { return fifo_.get(); }
    const Rotator& rotator() const { return rotator_; }
    bool dropping() const { return dropping_; }

private:
    enum class Step { Moved, Empty, WriteFailed };
    Step moveSome(uint64_t budget, uint64_t& moved, int& err);
    Step copySome(size_t len, uint64_t& moved, int& err);
    Step discardSome(uint64_t budget, uint64_t& dropped);

    void teeFromFile(uint64_t offset, size_t size);

    common::UniqueFd fifo_;
    std::function<void(const char*, size_t)> tee_;
    Rotator rotator_;
    bool useSplice_ = true;
    bool dropping_ = false;
    uint64_t dropped_ = 0;
    Clock::time_point lastTry_{};
};

}  // namespace taskscope::stream::logs
