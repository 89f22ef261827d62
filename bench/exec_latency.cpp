// Exec latency against floors measured in the same run, in a running task:
//
//   start       StartExec over the system bus until the command's first
//               byte of output arrives on the pipe passed back, against
//   floor       what any exec into a scope must do: fork a child held on a
//               pipe, AttachProcessesToUnit into the task's scope (waiting
//               for systemd's reply), release it to exec the command, and
//               read its first byte; and against
//   systemd-run `systemd-run --scope` of the same command (a new scope, the
//               stock tool), until its first byte.
//
//   echo        one byte written to the pty master received over D-Bus,
//               read back from `cat` running inside the task on that
//               terminal (raw mode, so the byte goes through cat), against
//   local       the same round trip through openpty(3) and a local cat.
//
// Prints medians and ratios (targets: start/floor <= 2, echo/local <= 2).
//   taskscope-bench-exec [N]

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <sdbus-c++/sdbus-c++.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/sdbus_compat.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kManager = "org.taskscope.Manager1";
constexpr const char* kExec = "org.taskscope.Exec1";
constexpr const char* kAlloc = "benchexec";

double ms(Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
}
double us(Clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "taskscope-bench-exec: %s\n", what.c_str());
    std::exit(1);
}

void readByte(int fd) {
    char c;
    ssize_t n;
    do n = ::read(fd, &c, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) die("read: no byte");
}

void reap(pid_t pid) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
}

// One task per run, so that runs can follow each other.
const std::string kTask = "target-" + std::to_string(::getpid());

double startOnce(sdbus::IProxy& exec) {
    const auto t0 = Clock::now();
    uint64_t session = 0;
    std::vector<sdbus::UnixFd> fds;
    exec.callMethod("StartExec")
        .onInterface(kExec)
        .withArguments(std::string(kAlloc), kTask, std::vector<std::string>{"echo", "x"},
                       std::map<std::string, std::string>{}, false, uint16_t(0), uint16_t(0))
        .storeResultsTo(session, fds);
    readByte(fds.at(1).get());
    const auto t1 = Clock::now();
    int32_t code = 0, sig = 0;
    exec.callMethod("WaitExec").onInterface(kExec).withArguments(session).storeResultsTo(code, sig);
    return ms(t1 - t0);
}

double floorOnce(sdbus::IProxy& systemd, const std::string& unit) {
    const auto t0 = Clock::now();
    int go[2], out[2];
    if (::pipe2(go, O_CLOEXEC) < 0 || ::pipe2(out, O_CLOEXEC) < 0) die("pipe");
    const pid_t child = ::fork();
    if (child == 0) {
        char c;
        if (::read(go[0], &c, 1) != 1) _exit(127);
        ::dup2(out[1], 1);
        ::execlp("echo", "echo", "x", nullptr);
        _exit(127);
    }
    ::close(go[0]);
    ::close(out[1]);
    systemd.callMethod("AttachProcessesToUnit")
        .onInterface("org.freedesktop.systemd1.Manager")
        .withArguments(unit, std::string(), std::vector<uint32_t>{static_cast<uint32_t>(child)});
    if (::write(go[1], "g", 1) != 1) die("release");
    readByte(out[0]);
    const auto t1 = Clock::now();
    ::close(go[1]);
    ::close(out[0]);
    reap(child);
    return ms(t1 - t0);
}

double systemdRunOnce() {
    const auto t0 = Clock::now();
    int out[2];
    if (::pipe2(out, O_CLOEXEC) < 0) die("pipe");
    const pid_t child = ::fork();
    if (child == 0) {
        ::dup2(out[1], 1);
        ::execlp("systemd-run", "systemd-run", "--quiet", "--scope", "--slice=bench.slice", "echo", "x", nullptr);
        _exit(127);
    }
    ::close(out[1]);
    readByte(out[0]);
    const auto t1 = Clock::now();
    ::close(out[0]);
    reap(child);
    return ms(t1 - t0);
}

// Round trips of one byte through a terminal whose other side runs cat.
std::vector<double> echoRoundTrips(int master, int n) {
    termios saved{};
    if (::tcgetattr(master, &saved) < 0) die("tcgetattr");
    termios t = saved;
    ::cfmakeraw(&t);  // on the master: the slave's settings; the byte goes through cat, not the tty's echo
    if (::tcsetattr(master, TCSANOW, &t) < 0) die("tcsetattr");
    // cat may start reading before or after the switch: settle with one trip.
    ::usleep(200000);
    tcflush(master, TCIOFLUSH);
    std::vector<double> v;
    for (int i = 0; i < n + 5; ++i) {
        const char c = static_cast<char>('a' + i % 26);
        const auto t0 = Clock::now();
        if (::write(master, &c, 1) != 1) die("write to the terminal");
        char back = 0;
        do {
            if (::read(master, &back, 1) != 1) die("read from the terminal");
        } while (back != c);
        if (i >= 5) v.push_back(us(Clock::now() - t0));  // the first few warm up
    }
    // Canonical again, so that an EOF character ends cat. cat's read that
    // began in raw mode still wants a byte: a line first, then the EOF.
    if (::tcsetattr(master, TCSADRAIN, &saved) < 0) die("tcsetattr");
    if (::write(master, "x\n\x04", 3) != 3) die("write EOF");
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 50;
    auto bus = sdbus::createSystemBusConnection();
    auto manager = sdbus::createProxy(*bus, taskscope::sdbus_compat::ServiceName{kManager},
                                      sdbus::ObjectPath{"/org/taskscope/Manager1"});
    auto exec = sdbus::createProxy(*bus, taskscope::sdbus_compat::ServiceName{"org.taskscope.Streamer1"},
                                   sdbus::ObjectPath{"/org/taskscope/Streamer1"});
    auto systemd = sdbus::createProxy(*bus, taskscope::sdbus_compat::ServiceName{"org.freedesktop.systemd1"},
                                      sdbus::ObjectPath{"/org/freedesktop/systemd1"});

    const std::string spec = nlohmann::json{{"command", "/bin/sleep"}, {"args", {"100000"}}, {"logs", false}}.dump();
    sdbus::ObjectPath path;
    manager->callMethod("StartTask").onInterface(kManager).withArguments(kAlloc, kTask, spec).storeResultsTo(path);
    std::string json;
    manager->callMethod("GetTask").onInterface(kManager).withArguments(kAlloc, kTask).storeResultsTo(json);
    const auto unit = nlohmann::json::parse(json).at("unit").get<std::string>();

    std::fprintf(stderr, "bench: task %s running; %d rounds of start latency\n", unit.c_str(), n);
    std::vector<double> start, floor, run;
    // Interleaved so that drift in the guest hits all three alike.
    for (int i = 0; i < n; ++i) {
        start.push_back(startOnce(*exec));
        floor.push_back(floorOnce(*systemd, unit));
        run.push_back(systemdRunOnce());
    }

    std::fprintf(stderr, "bench: tty echo\n");
    // TTY echo: cat in the task, on the terminal StartExec passed back...
    uint64_t session = 0;
    std::vector<sdbus::UnixFd> fds;
    exec->callMethod("StartExec")
        .onInterface(kExec)
        .withArguments(std::string(kAlloc), kTask, std::vector<std::string>{"cat"},
                       std::map<std::string, std::string>{}, true, uint16_t(24), uint16_t(80))
        .storeResultsTo(session, fds);
    const auto task = median(echoRoundTrips(fds.at(0).get(), n * 10));
    // ...and a local cat on a local pty.
    int master = -1, slave = -1;
    if (::openpty(&master, &slave, nullptr, nullptr, nullptr) < 0) die("openpty");
    const pid_t cat = ::fork();
    if (cat == 0) {
        ::setsid();
        ::ioctl(slave, TIOCSCTTY, 0);
        for (int fd = 0; fd < 3; ++fd) ::dup2(slave, fd);
        ::close(master);
        ::execlp("cat", "cat", nullptr);
        _exit(127);
    }
    ::close(slave);
    const auto local = median(echoRoundTrips(master, n * 10));
    ::close(master);
    reap(cat);
    // cat in the task has read its end of file.
    int32_t code = 0, sig = 0;
    exec->callMethod("WaitExec").onInterface(kExec).withArguments(session).storeResultsTo(code, sig);

    manager->callMethod("StopTask").onInterface(kManager).withArguments(kAlloc, kTask, std::string(), int64_t(0));
    for (int tries = 0; tries < 100; ++tries) {
        try {
            manager->callMethod("ForgetTask").onInterface(kManager).withArguments(kAlloc, kTask);
            break;
        } catch (const sdbus::Error&) {
            ::usleep(50000);  // its exit is on its way
        }
    }

    const double s = median(start), f = median(floor), r = median(run);
    std::printf(
        "exec start until first output, median of %d (ms): floor %.1f, systemd-run --scope %.1f, "
        "taskscope StartExec %.1f\n",
        n, f, r, s);
    std::printf("ratio StartExec/floor: %.2f (target <= 2)\n", s / f);
    std::printf("ratio StartExec/systemd-run: %.2f\n", s / r);
    std::printf(
        "tty echo round trip, median of %d (us): local pty + cat %.1f, exec'd cat over the passed master %.1f\n",
        n * 10, local, task);
    std::printf("ratio exec/local: %.2f (target <= 2)\n", task / local);
    return 0;
}
