#include "network/cni_exec.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/default_path.hpp"
#include "common/files.hpp"
#include "common/unique_fd.hpp"
#include "network/cni_config.hpp"
#include "common/error_names.hpp"

namespace taskscope::network {

namespace {

using common::UniqueFd;
using nlohmann::json;

struct Pipe {
    UniqueFd r, w;
};

common::Result<Pipe> makePipe() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return common::errnoError("pipe", errno);
    return Pipe{UniqueFd(p[0]), UniqueFd(p[1])};
}

bool hasIpv6(const json& result) {
    if (!result.is_object() || !result.contains("ips") || !result["ips"].is_array()) return false;
    for (const auto& ip : result["ips"])
        if (ip.is_object() && ip.value("address", "").find(':') != std::string::npos) return true;
    return false;
}

}  // namespace

common::Result<ProgramOutput> runProgram(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                         const std::string& input, std::chrono::milliseconds timeout) {
    auto in = makePipe();
    if (!in) return in.error();
    auto out = makePipe();
    if (!out) return out.error();
    auto err = makePipe();
    if (!err) return err.error();
    std::vector<char*> cargv, cenv;
    auto argvCopy = argv;
    auto envCopy = env;
    for (auto& a : argvCopy) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto& e : envCopy) cenv.push_back(e.data());
    cenv.push_back(nullptr);

    // Only async-signal-safe calls in the child: the manager has threads.
    const pid_t pid = ::fork();
    if (pid < 0) return common::errnoError("fork for " + argv[0], errno);
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        if (::dup2(in->r.get(), 0) < 0 || ::dup2(out->w.get(), 1) < 0 || ::dup2(err->w.get(), 2) < 0) ::_exit(126);
        ::execve(cargv[0], cargv.data(), cenv.data());
        ::_exit(127);
    }
    in->r.reset();
    out->w.reset();
    err->w.reset();
    // Configs are far below a pipe's 64 KiB: this write never waits for
    // the plugin to read.
    (void)common::writeAll(in->w.get(), input, "stdin of " + argv[0]);
    in->w.reset();

    ProgramOutput result;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    pollfd fds[2] = {{out->r.get(), POLLIN, 0}, {err->r.get(), POLLIN, 0}};
    int open = 2;
    while (open > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            ::kill(pid, SIGKILL);
            result.timedOut = true;
            break;
        }
        const int n = ::poll(fds, 2, static_cast<int>(left.count()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[4096];
            const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
            if (got > 0) {
                (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(got));
            } else if (got == 0 || errno != EINTR) {
                fds[i].fd = -1;
                --open;
            }
        }
    }
    int ws = 0;
    while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    result.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    return result;
}

common::Result<std::string> runPlugin(const CniCall& call, const std::string& type, const json& input) {
    if (type.find('/') != std::string::npos || type.empty())
        return common::makeError(common::errors::kCniFailed, "plugin type '" + type + "' is not a plain name");
    const auto binary = call.cniPath + "/" + type;
    if (::access(binary.c_str(), X_OK) != 0)
        return common::makeError(common::errors::kCniFailed, "CNI plugin " + binary + " is not installed");
    const std::vector<std::string> env = {
        "CNI_COMMAND=" + call.command, "CNI_CONTAINERID=" + call.containerId, "CNI_NETNS=" + call.netns,
        "CNI_IFNAME=" + call.ifname,   "CNI_PATH=" + call.cniPath,
        std::string("PATH=") + common::kDefaultPath,
    };
    auto ran = runProgram({binary}, env, input.dump(), call.timeout);
    if (!ran) return ran.error().context("run CNI plugin " + type);
    if (ran->timedOut)
        return common::makeError(common::errors::kCniFailed, "CNI plugin " + type + " " + call.command + " ran longer than " +
                                                  std::to_string(call.timeout.count()) + " ms and was killed");
    if (ran->status != 0) return cniError(type, call.command, ran->out, ran->err, ran->status);
    return std::move(ran->out);
}

common::Result<json> runChain(const CniCall& call, const json& conflist, const std::vector<PortMapping>& ports,
                              const json& cached) {
    const auto& plugins = conflist.at("plugins");
    if (call.command == "ADD") {
        json prev;
        for (const auto& p : plugins) {
            auto out = runPlugin(call, p.value("type", ""), pluginInput(conflist, p, prev, ports));
            if (!out) return out.error();
            auto parsed = parseCniResult(*out);
            if (!parsed) return parsed.error().context("CNI plugin " + p.value("type", "") + " ADD");
            prev = std::move(parsed->raw);
        }
        return prev;
    }
    if (call.command == "CHECK") {
        for (const auto& p : plugins) {
            // portmap up to 1.2 checks ip6tables rules it never made for a
            // container without an IPv6 address, so its CHECK always fails
            // there (containernetworking/plugins#819): skipped for such.
            if (p.value("type", "") == "portmap" && !hasIpv6(cached)) continue;
            if (auto out = runPlugin(call, p.value("type", ""), pluginInput(conflist, p, cached, ports)); !out)
                return out.error();
        }
        return cached;
    }
    // DEL undoes in reverse and goes on past a failure: what one plugin
    // could not remove must not keep the others from removing theirs.
    std::optional<common::Error> first;
    for (auto it = plugins.rbegin(); it != plugins.rend(); ++it)
        if (auto out = runPlugin(call, it->value("type", ""), pluginInput(conflist, *it, cached, ports)); !out && !first)
            first = out.error();
    if (first) return *first;
    return json();
}

}  // namespace taskscope::network
