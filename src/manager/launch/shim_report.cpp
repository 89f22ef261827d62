// The task shim's report lines read (shim_report.hpp; the wire is
// shim/shim_protocol.h).
#include "manager/launch/shim_report.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "common/error_names.hpp"
extern "C" {
#include "shim/shim_protocol.h"
}

namespace taskscope::manager {

namespace {

// "pid N", "started", "execfailed ERRNO STEP", "error ERRNO STEP": short.
constexpr size_t kMaxReportLine = SHIM_REPORT_LINE_MAX;

common::Error internal(std::string message) {
    return common::makeError(common::errors::kInternal, std::move(message));
}

// A report quoted in an error: printable ASCII as it is, any other byte as
// \xNN, so that whatever a torn or foreign line holds, the message is text
// (the journal's, and valid UTF-8 where an error crosses the bus).
std::string escaped(std::string_view line) {
    std::string out;
    for (const unsigned char c : line) {
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += static_cast<char>(c);
            continue;
        }
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
    return out;
}

std::string quotedLine(std::string_view line) {
    return "'" + escaped(line) + "'";
}

// A report's words: split at single spaces, as the shim writes them.
std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    for (size_t at = 0;;) {
        const size_t sp = line.find(' ', at);
        out.push_back(line.substr(at, sp == std::string_view::npos ? std::string_view::npos : sp - at));
        if (sp == std::string_view::npos) return out;
        at = sp + 1;
    }
}

// A decimal number in lo..hi as the shim writes one (shim_format_u64):
// nothing else, no sign, no space, no leading zero, no rest.
std::optional<int> number(std::string_view text, int lo, int hi) {
    if (text.empty() || text.size() > 10 || (text[0] == '0' && text.size() > 1)) return std::nullopt;
    long long v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    if (v < lo || v > hi) return std::nullopt;
    return static_cast<int>(v);
}

// An errno the shim reports: the kernel's are below 4096.
constexpr int kMaxErrno = 4095;

}  // namespace

common::Result<std::optional<std::string>> takeReportLine(int fd, std::string& pending) {
    for (;;) {
        if (const auto nl = pending.find('\n'); nl != std::string::npos) {
            // Checked here too: a block read can bring a line's end past
            // the bound along with the bytes that cross it.
            if (nl + 1 > kMaxReportLine)
                return internal("shim report line longer than " + std::to_string(kMaxReportLine) +
                                " bytes (its newline at byte " + std::to_string(nl) + ")");
            auto line = pending.substr(0, nl);
            pending.erase(0, nl + 1);
            return std::optional<std::string>(std::move(line));
        }
        if (pending.size() >= kMaxReportLine)
            return internal("shim report line longer than " + std::to_string(kMaxReportLine) + " bytes");
        // The shim writes each line in one write(2): one read usually
        // brings the whole line (it used to be read a byte at a time).
        char buf[128];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return std::optional<std::string>();
            return common::errnoError("read from shim", errno);
        }
        if (n == 0) return internal("shim exited before reporting (read " + quotedLine(pending) + ")");
        pending.append(buf, static_cast<size_t>(n));
    }
}

common::Result<pid_t> parsePidLine(const std::string& line) {
    const auto w = words(line);
    if (w[0] != SHIM_LINE_PID) return internal("shim could not fork the task: " + quotedLine(line));
    // The task is the shim's child: never pid 1, and one number alone.
    const auto pid = w.size() == 2 ? number(w[1], 2, std::numeric_limits<pid_t>::max()) : std::nullopt;
    if (!pid)
        return internal("shim reported a bad pid (2.." + std::to_string(std::numeric_limits<pid_t>::max()) +
                        "): " + quotedLine(line));
    return static_cast<pid_t>(*pid);
}

common::Result<void> acceptRelease(const std::string& line) {
    if (line == SHIM_LINE_STARTED) return {};
    // "execfailed ERRNO STEP" or "error ERRNO STEP": three words, STEP one
    // (empty when a step failed before it named itself).
    const auto w = words(line);
    const auto err = w.size() == 3 ? number(w[1], 1, kMaxErrno) : std::nullopt;
    if (err && w[0] == SHIM_LINE_EXECFAILED)
        return common::makeError(common::errors::kExecFailed,
                                 "could not run the command (" + escaped(w[2]) + "): " + std::strerror(*err));
    // The shim's own step failed after the task's pid was known (it joins
    // its scope then): nothing of the command ran.
    if (err && w[0] == SHIM_LINE_ERROR)
        return internal("the task's shim failed (" + escaped(w[2]) + "): " + std::strerror(*err));
    return internal("unexpected report from shim: " + quotedLine(line));
}

common::Result<std::string> readReportLine(int fd, std::string& pending) {
    for (;;) {
        auto line = takeReportLine(fd, pending);
        if (!line) return line.error();
        if (*line) return std::move(**line);
        pollfd p{fd, POLLIN, 0};
        ::poll(&p, 1, -1);  // a non-blocking fd with the line still on its way
    }
}

}  // namespace taskscope::manager
