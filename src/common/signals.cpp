#include "common/signals.hpp"

#include <signal.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <utility>

#include "common/error_names.hpp"

namespace taskscope::common {

namespace {

constexpr std::array<std::pair<const char*, int>, 31> kSignals{{
    {"HUP", SIGHUP},     {"INT", SIGINT},       {"QUIT", SIGQUIT},     {"ILL", SIGILL},
    {"TRAP", SIGTRAP},   {"ABRT", SIGABRT},     {"BUS", SIGBUS},       {"FPE", SIGFPE},
    {"KILL", SIGKILL},   {"USR1", SIGUSR1},     {"SEGV", SIGSEGV},     {"USR2", SIGUSR2},
    {"PIPE", SIGPIPE},   {"ALRM", SIGALRM},     {"TERM", SIGTERM},     {"STKFLT", SIGSTKFLT},
    {"CHLD", SIGCHLD},   {"CONT", SIGCONT},     {"STOP", SIGSTOP},     {"TSTP", SIGTSTP},
    {"TTIN", SIGTTIN},   {"TTOU", SIGTTOU},     {"URG", SIGURG},       {"XCPU", SIGXCPU},
    {"XFSZ", SIGXFSZ},   {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},     {"WINCH", SIGWINCH},
    {"IO", SIGIO},       {"PWR", SIGPWR},       {"SYS", SIGSYS},
}};

}  // namespace

Result<int> parseSignal(const std::string& text) {
    std::string up;
    up.reserve(text.size());
    std::transform(text.begin(), text.end(), std::back_inserter(up),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    int number = 0;
    const auto [end, ec] = std::from_chars(up.data(), up.data() + up.size(), number);
    if (!up.empty() && ec == std::errc() && end == up.data() + up.size()) {
        if (number >= 1 && number <= SIGRTMAX) return number;
        return makeError(common::errors::kInvalidSignal, "signal number " + text + " is out of range 1-" + std::to_string(SIGRTMAX));
    }
    const std::string bare = up.rfind("SIG", 0) == 0 ? up.substr(3) : up;
    for (const auto& [name, value] : kSignals)
        if (bare == name) return value;
    return makeError(common::errors::kInvalidSignal, "unknown signal '" + text + "'");
}

std::string signalName(int signal) {
    for (const auto& [name, value] : kSignals)
        if (value == signal) return std::string("SIG") + name;
    return "SIG" + std::to_string(signal);
}

}  // namespace taskscope::common
