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
#include "stream/logs/output_collector.hpp"
#include "stream/logs/rotator.hpp"

namespace taskscope::stream::logs {

class StreamCollector : public OutputCollector {
public:
    StreamCollector(common::UniqueFd fifo, Rotator rotator) : fifo_(std::move(fifo)), rotator_(std::move(rotator)) {}

    /// Opens the current log file.
    common::Result<void> open() { return rotator_.open(); }

    /// Moves at most budget bytes; call again while !empty. The tee gets
    /// the bytes read back from the page cache, since splice moved them
    /// without us.
    Drained drain(uint64_t budget, Clock::time_point now = Clock::now()) override;

    int fifoFd() const override { return fifo_.get(); }
    const Rotator& rotator() const { return rotator_; }
    bool dropping() const { return dropping_; }

private:
    enum class Step { Moved, Empty, WriteFailed };
    Step moveSome(uint64_t budget, uint64_t& moved, int& err);
    Step copySome(size_t len, uint64_t& moved, int& err);

    void teeFromFile(uint64_t offset, size_t size);

    common::UniqueFd fifo_;
    Rotator rotator_;
    bool useSplice_ = true;
    bool dropping_ = false;
    uint64_t dropped_ = 0;
    Clock::time_point lastTry_{};
};

}  // namespace taskscope::stream::logs
