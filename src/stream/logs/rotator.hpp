#pragma once
// Size-rotated log files as Nomad names them: <dir>/<base>.<N>, where base
// is "<task>.<stream>". N only grows; the highest N is the file written
// now. A file is closed at the size limit and the next one started; at
// most maxFiles are kept, the oldest deleted first. Nothing but the files
// on disk is state: a restarted streamer continues the highest existing
// file at its size.

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "common/unique_fd.hpp"

namespace taskscope::stream::logs {

/// One rotated file: its index and its size in bytes.
struct LogFile {
    uint64_t index = 0;
    uint64_t size = 0;
};

/// The rotated files of <dir>/<base>.<N>, ascending by index.
std::vector<LogFile> listLogFiles(const std::string& dir, const std::string& base);

/// <dir>/<base>.<index>
std::string logFilePath(const std::string& dir, const std::string& base, uint64_t index);

class Rotator {
public:
    Rotator(std::string dir, std::string base, int maxFiles, uint64_t maxFileSize);

    /// Opens the highest existing file (or index 0) for writing at its end.
    common::Result<void> open();

    /// The file to write now, at offset(); valid after open().
    int fd() const { return fd_.get(); }
    /// Where the next byte goes (also the current file's size).
    uint64_t offset() const { return offset_; }
    /// Bytes that fit before the next rotation (> 0 after open()/rotate()).
    uint64_t room() const { return maxFileSize_ > offset_ ? maxFileSize_ - offset_ : 0; }
    uint64_t index() const { return index_; }

    /// Records that n bytes were written at offset(); rotates when full.
    common::Result<void> advance(uint64_t n);

    const std::string& dir() const { return dir_; }
    const std::string& base() const { return base_; }

private:
    common::Result<void> openIndex(uint64_t index);
    void prune() const;

    std::string dir_;
    std::string base_;
    int maxFiles_;
    uint64_t maxFileSize_;
    common::UniqueFd fd_;
    uint64_t index_ = 0;
    uint64_t offset_ = 0;
};

}  // namespace taskscope::stream::logs
