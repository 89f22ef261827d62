#include "stream/logs/rotator.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

namespace taskscope::stream::logs {

std::string logFilePath(const std::string& dir, const std::string& base, uint64_t index) {
    return dir + "/" + base + "." + std::to_string(index);
}

std::vector<LogFile> listLogFiles(const std::string& dir, const std::string& base) {
    std::vector<LogFile> files;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return files;
    const std::string prefix = base + ".";
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name = e->d_name;
        if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
        const auto digits = name.substr(prefix.size());
        // Only plain decimal indexes: "x.stdout.3.tmp" or "x.stdout.03" are not ours.
        if (digits.size() > 1 && digits[0] == '0') continue;
        uint64_t index = 0;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
        if (ec != std::errc() || end != digits.data() + digits.size()) continue;
        struct stat st;
        if (::fstatat(::dirfd(d), e->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode)) continue;
        files.push_back({index, static_cast<uint64_t>(st.st_size)});
    }
    ::closedir(d);
    std::sort(files.begin(), files.end(), [](const LogFile& a, const LogFile& b) { return a.index < b.index; });
    return files;
}

Rotator::Rotator(std::string dir, std::string base, int maxFiles, uint64_t maxFileSize)
    : dir_(std::move(dir)),
      base_(std::move(base)),
      maxFiles_(std::max(1, maxFiles)),
      maxFileSize_(std::max<uint64_t>(1, maxFileSize)) {}

common::Result<void> Rotator::open() {
    const auto files = listLogFiles(dir_, base_);
    if (auto r = openIndex(files.empty() ? 0 : files.back().index); !r) return r;
    // A crash between filling a file and starting the next leaves it full.
    if (room() == 0) return advance(0);
    prune();
    return {};
}

common::Result<void> Rotator::openIndex(uint64_t index) {
    const auto path = logFilePath(dir_, base_, index);
    // No O_APPEND: splice(2) refuses files opened for append; the offset is
    // ours to keep (one writer per file). Read-write: the journal's copy
    // reads back what splice moved (collector.hpp).
    common::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600));
    if (!fd) return common::errnoError("open " + path, errno);
    struct stat st;
    if (::fstat(fd.get(), &st) < 0) return common::errnoError("stat " + path, errno);
    fd_ = std::move(fd);
    index_ = index;
    offset_ = static_cast<uint64_t>(st.st_size);
    return {};
}

common::Result<void> Rotator::advance(uint64_t n) {
    offset_ += n;
    if (offset_ < maxFileSize_) return {};
    // The next file exists before the oldest goes: a crash in between
    // leaves one file too many, never a gap.
    if (auto r = openIndex(index_ + 1); !r) return r;
    prune();
    return {};
}

void Rotator::prune() const {
    for (const auto& f : listLogFiles(dir_, base_)) {
        if (f.index + static_cast<uint64_t>(maxFiles_) > index_) break;
        ::unlink(logFilePath(dir_, base_, f.index).c_str());
    }
}

}  // namespace taskscope::stream::logs
