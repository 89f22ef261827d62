// The shim's options written and its spawn (launcher.hpp; the wire is
// shim/shim_protocol.h, its report lines read in shim_report.cpp).
#include "manager/launch/launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/error_names.hpp"
#include "common/files.hpp"
#include "manager/launch/isolation.hpp"
#include "manager/node/shim_spawn.hpp"
extern "C" {
#include "shim/shim_protocol.h"
}

namespace taskscope::manager {

namespace {

using common::UniqueFd;

// Pipe ends moved above the range posix_spawn's dup2 targets (3, 4) so a
// dup2 onto itself cannot leave FD_CLOEXEC set.
common::Result<std::pair<UniqueFd, UniqueFd>> highPipe() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return common::errnoError("pipe", errno);
    UniqueFd r(p[0]), w(p[1]);
    UniqueFd hr(::fcntl(r.get(), F_DUPFD_CLOEXEC, 10)), hw(::fcntl(w.get(), F_DUPFD_CLOEXEC, 10));
    if (!hr || !hw) return common::errnoError("dup pipe", errno);
    return std::make_pair(std::move(hr), std::move(hw));
}

std::string joinGroups(const std::vector<gid_t>& groups) {
    std::string out;
    for (auto g : groups) {
        if (!out.empty()) out += ',';
        out += std::to_string(g);
    }
    return out;
}

}  // namespace

common::Result<Launch> spawnShim(const std::string& shimPath, const spec::TaskSpec& spec, const LaunchPaths& paths) {
    auto report = highPipe();
    if (!report) return report.error();
    auto go = highPipe();
    if (!go) return go.error();

    // The task's process spec: what `taskscope-shim --exec` reads back, so
    // the same words set up the task and every command exec'd into it.
    std::vector<std::string> process = {SHIM_OPT_UID, std::to_string(spec.uid), SHIM_OPT_GID,
                                        std::to_string(spec.gid), SHIM_OPT_CWD, spec.cwd};
    if (!spec.groups.empty()) process.insert(process.end(), {SHIM_OPT_GROUPS, joinGroups(spec.groups)});
    for (auto& a : shimIsolationArgs(spec.isolation)) process.push_back(std::move(a));
    for (auto& a : shimDeviceArgs(spec)) process.push_back(std::move(a));
    // The host's resolv.conf fills what a dns block leaves empty: read
    // here, on the start worker, and only for a task that has one.
    std::string hostResolvConf;
    if (spec.dns && spec.isolation.filesystem)
        if (auto text = common::readFile("/etc/resolv.conf")) hostResolvConf = std::move(*text);
    for (auto& a : shimNetFileArgs(spec, hostResolvConf)) process.push_back(std::move(a));
    for (auto& a : shimLimitArgs(spec)) process.push_back(std::move(a));
    // The saved spec ends each word with a NUL (and the kernel ends each
    // argv word at one): a NUL inside a word would make the words after it
    // options the manager never wrote, for every exec into the task. The
    // spec refuses them where it reads paths; this is the wire's own rule.
    for (size_t i = 0; i < process.size(); ++i)
        if (process[i].find('\0') != std::string::npos) {
            size_t option = i;
            while (option > 0 && process[option].rfind("--", 0) != 0) --option;
            return common::makeError(common::errors::kInvalidSpec,
                                     "the shim's option " + process[option] + " has a word with a NUL byte");
        }
    if (!paths.processSpec.empty()) {
        std::string text;
        for (const auto& w : process) text += w + '\0';
        // Durable until the next boot is enough: the task does not outlive it.
        if (auto r = common::writeFileAtomic(paths.processSpec, text, common::kPrivateFileMode,
                                             common::Durability::ProcessCrash);
            !r)
            return r.error().context("save the task's process spec");
    }

    std::vector<std::string> argv = {shimPath, SHIM_OPT_EXIT_FILE, paths.exitFile};
    argv.insert(argv.end(), process.begin(), process.end());
    argv.insert(argv.end(), {SHIM_OPT_STDOUT, paths.stdoutFile.empty() ? "/dev/null" : paths.stdoutFile});
    argv.insert(argv.end(), {SHIM_OPT_STDERR, paths.stderrFile.empty() ? "/dev/null" : paths.stderrFile});
    if (!paths.releaseFifo.empty()) {
        argv.insert(argv.end(), {SHIM_OPT_RELEASE_FIFO, paths.releaseFifo});
        if (paths.keepTaskZombie) argv.push_back(SHIM_OPT_KEEP_TASK_ZOMBIE);
        if (!paths.forwardStdout.empty()) argv.insert(argv.end(), {SHIM_OPT_FORWARD_STDOUT, paths.forwardStdout});
        if (!paths.forwardStderr.empty()) argv.insert(argv.end(), {SHIM_OPT_FORWARD_STDERR, paths.forwardStderr});
    }
    for (const auto& procs : paths.joinCgroups) argv.insert(argv.end(), {SHIM_OPT_JOIN_CGROUP, procs});
    if (!paths.netns.empty()) argv.insert(argv.end(), {SHIM_OPT_NETNS, paths.netns});
    argv.insert(argv.end(), {SHIM_OPT_END, spec.path, spec.command});
    argv.insert(argv.end(), spec.args.begin(), spec.args.end());
    std::vector<std::string> envs;
    for (const auto& [k, v] : spec.env) envs.push_back(k + "=" + v);

    std::vector<char*> cargv, cenv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto& e : envs) cenv.push_back(e.data());
    cenv.push_back(nullptr);

    auto spawned = spawnShimProcess(shimPath, cargv.data(), cenv.data(),
                                    {{report->second.get(), SHIM_TASK_REPORT_FD}, {go->first.get(), SHIM_TASK_GO_FD}});
    if (!spawned) return spawned.error();
    const pid_t pid = *spawned;

    Launch launch;
    launch.shimPid = pid;
    launch.report = std::move(report->first);
    launch.go = std::move(go->second);
    report->second.reset();
    go->first.reset();
    // Read from the event loop: the manager never waits for a shim.
    ::fcntl(launch.report.get(), F_SETFL, ::fcntl(launch.report.get(), F_GETFL) | O_NONBLOCK);
    return launch;
}

common::Result<void> acceptPid(Launch& launch, const std::string& line) {
    auto pid = parsePidLine(line);
    if (!pid) return pid.error();
    launch.taskPid = *pid;
    return {};
}

common::Result<void> sendGo(Launch& launch) {
    const char g = SHIM_GO_BYTE;
    if (::write(launch.go.get(), &g, 1) != 1) return common::errnoError("release task", errno);
    launch.go.reset();
    return {};
}

common::Result<Launch> spawnTask(const std::string& shimPath, const spec::TaskSpec& spec, const LaunchPaths& paths) {
    auto launch = spawnShim(shimPath, spec, paths);
    if (!launch) return launch.error();
    auto line = readReportLine(launch->report.get(), launch->pending);
    if (!line) return line.error().context("start task");
    if (auto r = acceptPid(*launch, *line); !r) return r.error();
    return launch;
}

common::Result<void> releaseTask(Launch& launch) {
    if (auto r = sendGo(launch); !r) return r;
    auto line = readReportLine(launch.report.get(), launch.pending);
    launch.report.reset();
    if (!line) return line.error().context("release task");
    return acceptRelease(*line);
}

void abortTask(Launch& launch) {
    launch.go.reset();
    launch.report.reset();
}

}  // namespace taskscope::manager
