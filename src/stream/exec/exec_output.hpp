#pragma once
// The output an ExecOnce keeps: the first `limit` bytes, in order; the
// rest is counted and dropped, so the command never waits on a full pipe
// and the reply never grows past the cap.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace taskscope::stream::exec {

class OutputCapture {
public:
    explicit OutputCapture(size_t limit) : limit_(limit) {}

    void append(const char* data, size_t n) {
        total_ += n;
        const size_t room = limit_ - bytes_.size();
        const size_t keep = n < room ? n : room;
        bytes_.insert(bytes_.end(), data, data + keep);
    }

    const std::vector<uint8_t>& bytes() const { return bytes_; }
    std::vector<uint8_t> take() { return std::move(bytes_); }
    /// More was written than kept.
    bool truncated() const { return total_ > limit_; }
    uint64_t total() const { return total_; }

private:
    size_t limit_;
    uint64_t total_ = 0;
    std::vector<uint8_t> bytes_;
};

}  // namespace taskscope::stream::exec
