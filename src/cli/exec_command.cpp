// taskscopectl exec: run a command inside a running task through
// org.taskscope.Exec1, like `nomad alloc exec`. The command's terminal or
// pipes arrive as file descriptors; this process relays them to its own
// stdin/stdout/stderr and exits with the command's exit code.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "client/proxies.hpp"
#include "common/bus_error.hpp"
#include "common/sdbus_compat.hpp"

namespace taskscope::cli {

namespace {

constexpr const char* kInterface = "org.taskscope.Exec1";
constexpr uint32_t kDefaultMaxOutput = 64 * 1024;
constexpr int kTimeoutExit = 124;  // as timeout(1)
// How long a session's exit is waited for while no streamer answers.
constexpr std::chrono::seconds kStreamerReturn{60};

using client::ExecProxy;

struct ExecOptions {
    bool interactive = false;
    bool tty = false;
    std::optional<uint32_t> timeoutMs;
    uint32_t maxOutput = kDefaultMaxOutput;
    std::string alloc, task;
    std::vector<std::string> command;
};

uint32_t number(const std::string& flag, const std::string& text) {
    char* end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(text.c_str(), &end, 10);
    if (text.empty() || *end || errno || v > UINT32_MAX || text[0] == '-') die(flag + " takes a number", 2);
    return static_cast<uint32_t>(v);
}

ExecOptions parse(const std::vector<std::string>& args) {
    ExecOptions o;
    std::vector<std::string> positional;
    size_t i = 0;
    for (; i < args.size(); ++i) {
        const auto& a = args[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "--timeout" && i + 1 < args.size()) {
            o.timeoutMs = number(a, args[++i]);
        } else if (a == "--max-output" && i + 1 < args.size()) {
            o.maxOutput = number(a, args[++i]);
        } else if (a.size() > 1 && a[0] == '-' && a[1] != '-' && positional.size() < 2) {
            for (char c : a.substr(1)) {
                if (c == 'i')
                    o.interactive = true;
                else if (c == 't')
                    o.tty = true;
                else
                    die(std::string("exec: unknown option -") + c + "; see --help", 2);
            }
        } else if (a.rfind("--", 0) == 0 && positional.size() < 2) {
            die("exec: unknown option " + a + "; see --help", 2);
        } else {
            if (positional.size() == 2) break;  // the command starts here, without "--"
            positional.push_back(a);
        }
    }
    o.command.assign(args.begin() + static_cast<long>(i), args.end());
    if (positional.size() != 2 || o.command.empty()) die("exec takes ALLOC TASK -- COMMAND [ARGS...]; see --help", 2);
    if (o.timeoutMs && (o.tty || o.interactive)) die("exec: --timeout runs without -i and -t", 2);
    o.alloc = positional[0];
    o.task = positional[1];
    return o;
}

// --- the terminal, restored on every way out ---

std::optional<termios> g_saved;

void restoreTerminal() {
    if (g_saved) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &*g_saved);
}

void restoreAndReraise(int sig) {
    restoreTerminal();
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

void enterRawMode() {
    termios t{};
    if (::tcgetattr(STDIN_FILENO, &t) < 0) return;
    g_saved = t;
    std::atexit(restoreTerminal);
    for (int sig : {SIGTERM, SIGHUP, SIGQUIT, SIGINT, SIGPIPE}) ::signal(sig, restoreAndReraise);
    ::cfmakeraw(&t);
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &t);
}

// The caller's window, else $LINES x $COLUMNS, else 24 x 80.
std::pair<uint16_t, uint16_t> windowSize() {
    winsize ws{};
    for (int fd : {STDIN_FILENO, STDOUT_FILENO})
        if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) return {ws.ws_row, ws.ws_col};
    auto env = [](const char* name, uint16_t fallback) {
        const char* v = std::getenv(name);
        const long n = v ? std::strtol(v, nullptr, 10) : 0;
        return n > 0 && n <= 4096 ? static_cast<uint16_t>(n) : fallback;
    };
    return {env("LINES", 24), env("COLUMNS", 80)};
}

void setNonBlocking(int fd) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// Copies what is readable from `from` to `to`; false at end of file (EIO
// on a terminal whose other side is all closed counts as one).
bool pump(int from, int to) {
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(from, buf, sizeof buf);
        if (n > 0) {
            writeAll(to, buf, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return true;
        return false;
    }
}

struct Exit {
    int32_t code = 0;
    int32_t signal = 0;
};

int interactive(sdbus::IConnection& conn, const ExecOptions& o) {
    ExecProxy exec(conn);
    const bool stdinTty = ::isatty(STDIN_FILENO);
    const auto [rows, cols] = o.tty ? windowSize() : std::pair<uint16_t, uint16_t>{0, 0};
    std::map<std::string, std::string> env;
    if (o.tty) {
        const char* term = std::getenv("TERM");
        env["TERM"] = term && *term ? term : "xterm";
    }
    // SIGWINCH through a signalfd, so it is just one more fd to poll.
    sigset_t winch;
    sigemptyset(&winch);
    sigaddset(&winch, SIGWINCH);
    ::sigprocmask(SIG_BLOCK, &winch, nullptr);
    const int sigfd = ::signalfd(-1, &winch, SFD_CLOEXEC | SFD_NONBLOCK);

    auto [session, fds] = exec.StartExec(o.alloc, o.task, o.command, env, o.tty, rows, cols);
    if (fds.size() != (o.tty ? 1u : 3u)) die("the streamer passed " + std::to_string(fds.size()) + " descriptors");
    // With a terminal: its master for input and output; else stdin, stdout, stderr.
    const int input = fds[0].get();
    std::vector<std::pair<int, int>> outputs;  // (from, to)
    if (o.tty)
        outputs = {{fds[0].get(), STDOUT_FILENO}};
    else
        outputs = {{fds[1].get(), STDOUT_FILENO}, {fds[2].get(), STDERR_FILENO}};
    for (auto& [from, to] : outputs) setNonBlocking(from);

    std::optional<Exit> exited;
    std::optional<sdbus::Error> waitError;
    auto askForExit = [&] {
        exec.raw()
            .callMethodAsync("WaitExec")
            .onInterface(kInterface)
            .withTimeout(UINT64_MAX)  // as long as the command runs
            .withArguments(session)
            .uponReplyInvoke([&](sdbus_compat::ReplyError e, int32_t code, int32_t sig) {
                if (e)
                    waitError = *e;
                else
                    exited = Exit{code, sig};
            });
    };
    askForExit();
    // A streamer that restarts takes the session over: its exit is asked
    // for again once it is back (the call starts it if systemd has not).
    using Clock = std::chrono::steady_clock;
    // Plain time points with flags: GCC 12 misreads optional<time_point>.
    bool askAgain = false, gone = false;
    Clock::time_point askAgainAt{}, goneSince{};
    auto lastAsk = Clock::now();

    // -t relays stdin as a terminal needs input; -i relays it into the pipe.
    const bool relayIn = o.tty || o.interactive;
    // Without a terminal, closing the pipe is the command's end of file.
    auto closeStdinPipe = [&] {
        if (!o.tty) fds[0].reset();
    };
    if (!relayIn) closeStdinPipe();
    if (o.tty && stdinTty) enterRawMode();
    if (relayIn) setNonBlocking(input);
    std::string toCommand;
    bool inputEof = false;
    std::vector<bool> open(outputs.size(), true);

    for (;;) {
        if (waitError && streamerGone(*waitError)) {
            const auto now = Clock::now();
            // A call that was not refused at once was taken: a new outage.
            if (!gone || now - lastAsk > std::chrono::seconds(2)) goneSince = now;
            gone = true;
            if (now - goneSince < kStreamerReturn) {
                waitError.reset();
                askAgain = true;
                askAgainAt = now + std::chrono::milliseconds(250);
            }
        }
        if (exited || waitError) break;
        if (askAgain && Clock::now() >= askAgainAt) {
            askAgain = false;
            lastAsk = Clock::now();
            askForExit();
        }
        std::vector<pollfd> p;
        const auto bus = sdbus_compat::busWait(conn);
        bus.addTo(p);
        const size_t sigIdx = p.size();
        p.push_back({sigfd, POLLIN, 0});
        const size_t firstOut = p.size();
        for (size_t k = 0; k < outputs.size(); ++k) p.push_back({open[k] ? outputs[k].first : -1, POLLIN, 0});
        const size_t inIdx = p.size();
        p.push_back({relayIn && !inputEof && toCommand.empty() ? STDIN_FILENO : -1, POLLIN, 0});
        p.push_back({relayIn && !toCommand.empty() ? input : -1, POLLOUT, 0});
        int timeout = bus.timeoutMs();
        if (askAgain) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(askAgainAt - Clock::now());
            const int ms = static_cast<int>(std::max<int64_t>(0, left.count()));
            timeout = timeout < 0 ? ms : std::min(timeout, ms);
        }
        if (::poll(p.data(), p.size(), timeout) < 0) {
            if (errno == EINTR) continue;
            die(std::string("poll: ") + std::strerror(errno));
        }
        while (sdbus_compat::processPending(conn)) {
        }
        if (p[sigIdx].revents) {
            signalfd_siginfo si;
            while (::read(sigfd, &si, sizeof si) == sizeof si) {
            }
            if (o.tty) {
                const auto [r, c] = windowSize();
                try {
                    exec.ResizeExec(session, r, c);
                } catch (const sdbus::Error&) {
                    // The session has just ended: its exit is on its way.
                }
            }
        }
        for (size_t k = 0; k < outputs.size(); ++k)
            if (open[k] && p[firstOut + k].revents && !pump(outputs[k].first, outputs[k].second)) open[k] = false;
        if (p[inIdx].revents) {
            char buf[65536];
            const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
            if (n > 0) {
                toCommand.append(buf, static_cast<size_t>(n));
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                inputEof = true;
                // A terminal has no end of file: send its EOF character, as
                // script(1) does, which ends a reader in canonical mode.
                if (o.tty && !stdinTty) toCommand.push_back('\x04');
                closeStdinPipe();
            }
        }
        if (!toCommand.empty() && p[inIdx + 1].revents) {
            const ssize_t n = ::write(input, toCommand.data(), toCommand.size());
            if (n > 0) {
                toCommand.erase(0, static_cast<size_t>(n));
            } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                toCommand.clear();  // the command stopped reading for good
                inputEof = true;
                closeStdinPipe();
            }
        }
        if (inputEof && toCommand.empty()) closeStdinPipe();
    }
    // What the command wrote before it exited is still in the pipes.
    for (size_t k = 0; k < outputs.size(); ++k)
        if (open[k]) pump(outputs[k].first, outputs[k].second);
    restoreTerminal();
    if (waitError) throw *waitError;
    return exited->code;
}

int once(sdbus::IConnection& conn, const ExecOptions& o) {
    ExecProxy exec(conn);
    int32_t code = 0, sig = 0;
    std::vector<uint8_t> output;
    bool truncated = false;
    try {
        exec.raw()
            .callMethod("ExecOnce")
            .onInterface(kInterface)
            .withTimeout(std::chrono::milliseconds(*o.timeoutMs) + std::chrono::seconds(60))
            .withArguments(o.alloc, o.task, o.command, std::map<std::string, std::string>{}, *o.timeoutMs, o.maxOutput)
            .storeResultsTo(code, sig, output, truncated);
    } catch (const sdbus::Error& e) {
        if (e.getName() != common::busErrorName(common::errors::kTimeout)) throw;
        die(e.getMessage() + " (" + e.getName() + ")", kTimeoutExit);
    }
    writeAll(STDOUT_FILENO, reinterpret_cast<const char*>(output.data()), output.size());
    if (truncated) std::fprintf(stderr, "taskscopectl: output truncated to its first %u bytes\n", o.maxOutput);
    return code;
}

}  // namespace

int execCommand(sdbus::IConnection& conn, const std::vector<std::string>& args) {
    const auto o = parse(args);
    try {
        return o.timeoutMs ? once(conn, o) : interactive(conn, o);
    } catch (const sdbus::Error& e) {
        // As a shell reports a command it cannot run.
        const int code = e.getName() == common::busErrorName(common::errors::kNoSuchBinary) ? 127
                         : e.getName() == common::busErrorName(common::errors::kExecFailed) ? 126
                                                                                            : 1;
        die(e.getMessage() + " (" + e.getName() + ")", code);
    }
}

}  // namespace taskscope::cli
