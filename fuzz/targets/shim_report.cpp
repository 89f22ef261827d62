// Fuzz target: the manager's readers of a task shim's report lines
// (src/manager/launch/shim_report.hpp; the wire is shim/shim_protocol.h):
// takeReportLine cutting lines from the non-blocking report pipe, then
// parsePidLine for the first line ("pid N", or "error ERRNO STEP") and
// acceptRelease for the next ("started", "execfailed ERRNO STEP", "error
// ERRNO STEP"). Byte 0 picks how many bytes the pipe gets at a time (so
// lines arrive cut anywhere, as from a shim that is slow or torn), the
// rest is what the shim wrote; then the writer closes.
// Properties: no crash or hang; the lines taken are the stream's own, in
// order, each shorter than SHIM_REPORT_LINE_MAX with no newline; once
// the reader refuses, the manager stops reading (as start_procedure
// does); an accepted pid is 2 or more and the line's number exactly
// ("pid N", N decimal without a leading zero; launcher.cpp's acceptPid
// sets the launch's pid only then); every error names itself and its
// message is printable ASCII whatever the bytes (it reaches the journal
// and the bus); after any input a good report parses.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "common/unique_fd.hpp"
#include "fuzz_support.hpp"
#include "manager/launch/shim_report.hpp"
extern "C" {
#include "shim/shim_protocol.h"
}

using namespace taskscope;

namespace {

void checkError(const common::Error& e) {
    fuzz::check(!e.name.empty() && !e.message.empty(), "an error without name or message");
    for (const unsigned char c : e.message)
        fuzz::check(c >= 0x20 && c < 0x7f, "an error message that is not printable");
}

// One launch's report pipe, fed `stream` `chunk` bytes at a time.
void replay(std::string_view stream, size_t chunk) {
    int p[2];
    fuzz::check(::pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0, "pipe2");
    common::UniqueFd r(p[0]), w(p[1]);
    std::string pending;
    std::string taken;  // the lines taken, each with its newline
    int lines = 0;
    size_t at = 0;
    bool closed = false;
    for (;;) {
        auto line = manager::takeReportLine(r.get(), pending);
        if (!line) {
            checkError(line.error());
            break;
        }
        if (!*line) {
            fuzz::check(!closed, "no line and no error after the writer closed");
            if (at < stream.size()) {
                const size_t n = std::min(chunk, stream.size() - at);
                fuzz::check(::write(w.get(), stream.data() + at, n) == static_cast<ssize_t>(n), "write");
                at += n;
            } else {
                w.reset();
                closed = true;
            }
            continue;
        }
        const std::string& text = **line;
        fuzz::check(text.size() < SHIM_REPORT_LINE_MAX, "a line as long as SHIM_REPORT_LINE_MAX or longer");
        fuzz::check(text.find('\n') == std::string::npos, "a line with a newline inside");
        taken += text + '\n';
        fuzz::check(stream.substr(0, taken.size()) == taken, "a line that is not the stream's next");
        if (lines++ == 0) {
            auto pid = manager::parsePidLine(text);
            if (!pid) {
                checkError(pid.error());
                break;
            }
            fuzz::check(*pid >= 2, "a pid below 2 accepted");
            fuzz::check(text == "pid " + std::to_string(*pid), "a pid accepted that is not the line's number");
        } else {
            auto got = manager::acceptRelease(text);
            if (!got) checkError(got.error());
            break;  // the release's outcome is the last line the manager reads
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    replay(fuzz::text(data + 1, size - 1), 1 + data[0] % 130);
    auto good = manager::parsePidLine("pid 42");
    fuzz::check(good.ok() && *good == 42 && manager::acceptRelease("started").ok(),
                "a good report no longer parses after this input");
    auto failed = manager::acceptRelease("execfailed 2 execve");
    fuzz::check(!failed && failed.error().name == common::errors::kExecFailed, "execfailed is no longer ExecFailed");
    return 0;
}
