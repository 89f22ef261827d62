// Fuzz target: what the streamer reads from an exec's child
// (src/stream/exec/exec_spawn.hpp; the wire is shim/shim_protocol.h): the
// report frames of `taskscope-shim --exec` (struct shim_exec_report,
// SpawnReports::read, fed through a non-blocking pipe), the keeper's wait
// status (readKeeperStatus, then resultFromStatus: how the command
// ended), and ExecOnce's output capture (OutputCapture). What a client
// sends an exec goes to the command's own fds, or is a D-Bus call with
// typed arguments (validateWindow and the like, exec_request.hpp): no
// bytes of theirs are parsed. Byte 0 picks how many bytes the report pipe
// gets at a time and the capture's limit; byte 1 how many bytes of the
// input's end are the keeper's status (8: the keeper still runs, the pipe
// is empty); the rest is the report stream, and what the capture gets.
// Properties: no crash or hang; the leader is 0 or a pid above 1 (signal()
// sends to -leader: -1 is every process) and, once known, stays; the
// first failure stays, its step printable text of at most 23 bytes; EOF is
// seen once the writer closes (awaited with poll, as the streamer does); a
// status is read only when all of it came
// (a keeper that is gone without a word, or a torn word, is SIGKILL), and
// its result is an exit code 0..255 or 128 + a signal; the capture keeps
// the first `limit` bytes in order and counts all; a good report parses
// after any input (each session reads its own pipe: nothing carries over).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "fuzz_support.hpp"
#include "shim/shim_protocol.h"
#include "stream/exec/exec_output.hpp"
#include "stream/exec/exec_session.hpp"
#include "stream/exec/exec_spawn.hpp"

using namespace taskscope;
using namespace taskscope::stream::exec;

namespace {

struct Pipe {
    common::UniqueFd r, w;
    Pipe() {
        int p[2];
        fuzz::check(::pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0, "pipe2");
        r.reset(p[0]);
        w.reset(p[1]);
    }
};

void reports(std::string_view stream, size_t chunk) {
    Pipe p;
    SpawnReports got;
    pid_t leader = 0;
    bool failed = false;
    std::string step;
    int error = 0;
    for (size_t at = 0; at < stream.size(); at += chunk) {
        const size_t n = std::min(chunk, stream.size() - at);
        fuzz::check(::write(p.w.get(), stream.data() + at, n) == static_cast<ssize_t>(n), "write");
        got.read(p.r.get());
        fuzz::check(!got.eof, "end of file while the writer is open");
        fuzz::check(got.leader == 0 || got.leader >= 2, "a leader that is not a pid above 1");
        if (leader) fuzz::check(got.leader == leader, "the leader changed");
        leader = got.leader;
        fuzz::check(got.step.size() < sizeof(shim_exec_report::step), "a step longer than the frame's");
        for (const unsigned char c : got.step) fuzz::check(c >= 0x20 && c < 0x7f, "a step that is not printable");
        if (failed) fuzz::check(got.failed && got.step == step && got.error == error, "the first failure changed");
        failed = got.failed;
        step = got.step;
        error = got.error;
    }
    p.w.reset();
    // The streamer reads the pipe when its loop says it is readable
    // (ExecService::onReports), so the end is awaited the same way. A
    // close(2) ends the pipe at once only when no one else holds the file:
    // anyone reading /proc/<pid>/fdinfo holds it for a moment, and then the
    // end comes a little later. The 10-minute run met that once (a read
    // right after the close said EAGAIN; the input passed alone).
    for (int tries = 0; !got.eof && tries < 50; ++tries) {
        pollfd in{p.r.get(), POLLIN, 0};
        (void)::poll(&in, 1, 100);
        got.read(p.r.get());
    }
    fuzz::check(got.eof, "no end of file within 5 s of the writer's close");
}

void keeper(std::string_view word, bool running) {
    Pipe p;
    if (!word.empty())
        fuzz::check(::write(p.w.get(), word.data(), word.size()) == static_cast<ssize_t>(word.size()), "write");
    if (!running) {
        p.w.reset();
        pollfd in{p.r.get(), POLLIN, 0};  // as the streamer waits (see reports())
        (void)::poll(&in, 1, 5000);
    }
    const auto status = readKeeperStatus(p.r.get());
    if (running) {
        fuzz::check(!status.ended, "a status while the keeper runs and wrote nothing");
        return;
    }
    fuzz::check(status.ended, "no status once the keeper is gone");
    if (word.size() < sizeof(int)) {
        fuzz::check(status.status == SIGKILL, "a torn or missing status that is not SIGKILL");
    } else {
        int expect;
        std::memcpy(&expect, word.data(), sizeof expect);
        fuzz::check(status.status == expect, "a status that is not the word written");
    }
    const auto result = resultFromStatus(status.status);
    if (result.signal)
        fuzz::check(result.signal > 0 && result.signal < 128 && result.exitCode == 128 + result.signal,
                    "a signal's exit code is not 128 + the signal");
    else
        fuzz::check(result.exitCode == -1 || (result.exitCode >= 0 && result.exitCode <= 255),
                    "an exit code out of range");
}

void capture(std::string_view bytes, size_t limit, size_t chunk) {
    OutputCapture c(limit);
    for (size_t at = 0; at < bytes.size(); at += chunk) c.append(bytes.data() + at, std::min(chunk, bytes.size() - at));
    const size_t kept = std::min(limit, bytes.size());
    fuzz::check(c.total() == bytes.size() && c.bytes().size() == kept && c.truncated() == (bytes.size() > limit),
                "the capture's counts");
    fuzz::check(std::equal(c.bytes().begin(), c.bytes().end(), reinterpret_cast<const uint8_t*>(bytes.data())),
                "the capture's bytes are not the output's first");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const size_t chunk = 1 + data[0] % 64;
    const size_t statusBytes = data[1] % 9;
    const auto rest = fuzz::text(data + 2, size - 2);
    const size_t split = rest.size() - std::min(rest.size(), statusBytes == 8 ? 0 : statusBytes);
    reports(rest.substr(0, split), chunk);
    keeper(rest.substr(split), statusBytes == 8);
    capture(rest, data[0], chunk);

    shim_exec_report good{};
    good.kind = SHIM_REPORT_LEADER;
    good.value = 4242;
    Pipe p;
    fuzz::check(::write(p.w.get(), &good, sizeof good) == static_cast<ssize_t>(sizeof good), "write");
    SpawnReports r;
    r.read(p.r.get());
    fuzz::check(r.leader == 4242 && !r.failed, "a good report no longer parses after this input");
    return 0;
}
