// taskscopectl: the people's front end to org.taskscope.Manager1.

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "cli/manager_client.hpp"
#include "cli/stats_command.hpp"
#include "common/bus_error.hpp"
#include "common/files.hpp"
#include "client/proxies.hpp"
#include "spec/task_spec.hpp"
#include "wire/task_json.hpp"

namespace {

using taskscope::cli::awaitTask;
using taskscope::cli::connect;
using taskscope::cli::die;
using taskscope::cli::ManagerProxy;
using taskscope::cli::readTask;

void usage(FILE* out) {
    std::fprintf(out,
                 "Usage: taskscopectl [--json] COMMAND ...\n"
                 "  run [--spec JSON|@FILE] [--wait] ALLOC TASK [-- COMMAND [ARGS...]]\n"
                 "                      start a task; COMMAND fills the spec's command and args\n"
                 "  stop [--signal SIG] [--grace MS] [--no-wait] ALLOC TASK\n"
                 "                      stop a task: print its exit once it has exited (unless\n"
                 "                      --no-wait) and exit 0, also when it had already exited\n"
                 "  signal ALLOC TASK SIGNAL\n"
                 "  wait ALLOC TASK     wait until the task exits; exit with its code\n"
                 "  status ALLOC TASK   show one task\n"
                 "  list                list tasks\n"
                 "  forget ALLOC TASK   drop an exited task\n"
                 "  update ALLOC TASK RESOURCES_JSON\n"
                 "                      change a running task's limits, e.g. '{\"memory_mb\":256}'\n"
                 "  fingerprint         the node's facts as the manager sees them\n"
                 "  network create [--spec JSON|@FILE] ALLOC\n"
                 "                      give an allocation a network namespace (default mode none;\n"
                 "                      e.g. '{\"mode\":\"bridge\",\"ports\":[{\"host_port\":8080,\"container_port\":80}]}')\n"
                 "  network show ALLOC  show an allocation's network\n"
                 "  network destroy ALLOC\n"
                 "                      remove it (refused while tasks of the allocation run)\n"
                 "  network list        list networks\n"
                 "  logs [-f] [-n N] [--stderr] ALLOC TASK\n"
                 "                      print a task's stdout (or stderr); -n: the last N lines;\n"
                 "                      -f: follow until the task has exited and its output is drained,\n"
                 "                      also across restarts of the streamer (no line lost or twice)\n"
                 "  stats [--json] [--watch] [--interval MS|default] [ALLOC TASK]\n"
                 "                      resource usage of every task (a table), or of one; --watch: print\n"
                 "                      each new sample as it arrives; --interval: sample the task every MS\n"
                 "                      (0: off; 'default': the default again), or without a task set the default\n"
                 "  stats --alloc [--json] [ALLOC]\n"
                 "                      totals of every allocation's running tasks (one row each: TASKS, the\n"
                 "                      task columns, SLICE), or of one; an allocation slice is read as one\n"
                 "                      cgroup, a flat allocation's tasks are summed\n"
                 "  alloc list          every allocation the manager knows, with its task counts\n"
                 "  alloc status ALLOC  an allocation by its ID: its slice, its tasks (state, pid, exit)\n"
                 "                      and its totals\n"
                 "  alloc stats ALLOC   its totals (CPU, memory, pids) on one line\n"
                 "  alloc stop [--signal SIG] [--grace MS] [--no-wait] ALLOC\n"
                 "                      stop every running task of it at once, as stop does one; print\n"
                 "                      each exit (unless --no-wait) and exit 0 once all have exited\n"
                 "  alloc forget ALLOC  drop its exited tasks (its slice goes with the last); fails\n"
                 "                      naming the tasks still running, which it leaves\n"
                 "  exec [-i] [-t] ALLOC TASK -- COMMAND [ARGS...]\n"
                 "                      run a command inside a running task; -t: on a terminal\n"
                 "                      (stdin relayed), -i: relay stdin; exits with its exit code\n"
                 "  exec --timeout MS [--max-output BYTES] ALLOC TASK -- COMMAND [ARGS...]\n"
                 "                      run it to its end within MS (exit 124 past it), print\n"
                 "                      its output (stdout and stderr, the first BYTES, default 65536)\n"
                 "Environment: TASKSCOPE_BUS_ADDRESS talks to a bus other than the system bus.\n");
}

std::string readSpec(const std::string& arg) {
    if (!arg.empty() && arg[0] == '@') {
        auto text = taskscope::common::readFile(arg.substr(1));
        if (!text) die(text.error().message);
        return *text;
    }
    return arg;
}

int networkCommand(ManagerProxy& m, std::vector<std::string> args, bool json) {
    if (args.empty()) die("network takes create, show, destroy or list; see --help", 2);
    const std::string sub = args[0];
    args.erase(args.begin());
    if (sub == "create") {
        std::string spec;
        std::vector<std::string> positional;
        for (size_t i = 0; i < args.size(); ++i) {
            if (args[i] == "--spec" && i + 1 < args.size())
                spec = readSpec(args[++i]);
            else
                positional.push_back(args[i]);
        }
        if (positional.size() != 1) die("network create takes ALLOC; see --help", 2);
        m->CreateNetwork(positional[0], spec);
        std::cout << m->GetNetwork(positional[0]) << "\n";
        return 0;
    }
    if (sub == "show" && args.size() == 1) {
        auto j = nlohmann::json::parse(m->GetNetwork(args[0]));
        std::cout << j.dump(json ? -1 : 2) << "\n";
        return 0;
    }
    if (sub == "destroy" && args.size() == 1) {
        m->DestroyNetwork(args[0]);
        return 0;
    }
    if (sub == "list" && args.empty()) {
        const auto nets = m->ListNetworks();
        if (json) {
            auto arr = nlohmann::json::array();
            for (const auto& n : nets) arr.push_back({{"alloc_id", n.get<0>()}, {"mode", n.get<1>()}, {"netns", n.get<2>()}});
            std::cout << arr.dump() << "\n";
        } else {
            std::printf("%-38s %-7s %s\n", "ALLOC", "MODE", "NETNS");
            for (const auto& n : nets)
                std::printf("%-38s %-7s %s\n", n.get<0>().c_str(), n.get<1>().c_str(), n.get<2>().c_str());
        }
        return 0;
    }
    die("network takes create [--spec JSON] ALLOC, show ALLOC, destroy ALLOC or list; see --help", 2);
}

int run(std::vector<std::string> args, bool json) {
    if (args.empty()) {
        usage(stderr);
        return 2;
    }
    const std::string cmd = args[0];
    args.erase(args.begin());
    auto conn = connect();
    if (cmd == "logs") return taskscope::cli::logsCommand(*conn, args);
    if (cmd == "stats") return taskscope::cli::statsCommand(*conn, args, json);
    if (cmd == "exec") return taskscope::cli::execCommand(*conn, args);
    if (cmd == "alloc") return taskscope::cli::allocCommand(*conn, args, json);
    ManagerProxy m(*conn);
    auto need = [&](size_t n) {
        if (args.size() != n) die("'" + cmd + "' takes " + std::to_string(n) + " arguments; see --help", 2);
    };

    if (cmd == "run") {
        std::string spec = "{}";
        bool wait = false;
        std::vector<std::string> positional, command;
        for (size_t i = 0; i < args.size(); ++i) {
            if (args[i] == "--") {
                command.assign(args.begin() + static_cast<long>(i) + 1, args.end());
                break;
            } else if (args[i] == "--spec" && i + 1 < args.size()) {
                spec = readSpec(args[++i]);
            } else if (args[i] == "--wait") {
                wait = true;
            } else {
                positional.push_back(args[i]);
            }
        }
        if (positional.size() != 2) die("run takes ALLOC TASK; see --help", 2);
        auto j = nlohmann::json::parse(spec, nullptr, false);
        if (j.is_discarded() || !j.is_object()) die("--spec is not a JSON object", 2);
        if (!command.empty()) {
            j["command"] = command[0];
            j["args"] = std::vector<std::string>(command.begin() + 1, command.end());
        }
        // The typed spec, checked here as the manager will check it, and
        // sent in its one encoding.
        auto typed = taskscope::spec::taskSpecFromJson(j);
        if (!typed)
            throw taskscope::common::toBusError(typed.error());
        m.watch(positional[0], positional[1]);
        const auto path = m->StartTask(positional[0], positional[1], taskscope::spec::toText(*typed));
        if (!wait) {
            std::cout << (json ? nlohmann::json{{"object_path", std::string(path)}}.dump() : std::string(path)) << "\n";
            return 0;
        }
        return awaitTask(*conn, m, positional[0], positional[1], json);
    }
    if (cmd == "stop") {
        std::string sig;
        int64_t grace = -1;
        bool wait = true;
        std::vector<std::string> positional;
        for (size_t i = 0; i < args.size(); ++i) {
            if (args[i] == "--signal" && i + 1 < args.size())
                sig = args[++i];
            else if (args[i] == "--grace" && i + 1 < args.size())
                grace = std::stoll(args[++i]);
            else if (args[i] == "--no-wait")
                wait = false;
            else
                positional.push_back(args[i]);
        }
        if (positional.size() != 2) die("stop takes ALLOC TASK; see --help", 2);
        m.watch(positional[0], positional[1]);
        try {
            m->StopTask(positional[0], positional[1], sig, grace);
        } catch (const sdbus::Error& e) {
            // Already exited: what a stop asks for is there (systemctl stop
            // of a stopped unit says 0 too); its exit is printed below.
            if (e.getName() != taskscope::common::busErrorName(taskscope::common::errors::kNotRunning)) throw;
            wait = true;
        }
        // The stop succeeded once the task has exited, whatever its code
        // (143 after SIGTERM): 0, as systemctl stop and docker stop say it.
        // wait and run --wait are the ones that pass the code on.
        if (wait) (void)awaitTask(*conn, m, positional[0], positional[1], json);
        return 0;
    }
    if (cmd == "wait") {
        need(2);
        m.watch(args[0], args[1]);
        return awaitTask(*conn, m, args[0], args[1], json);
    }
    if (cmd == "signal") {
        need(3);
        m->SignalTask(args[0], args[1], args[2]);
        return 0;
    }
    if (cmd == "status") {
        need(2);
        const auto reply = m.getTask(*conn, args[0], args[1]);
        if (json) {
            std::cout << reply << "\n";
        } else {
            const auto t = readTask(reply);
            const auto b = [](bool v) { return std::string(v ? "true" : "false"); };
            const std::pair<const char*, std::string> lines[] = {
                {"alloc_id", t.allocId},
                {"task", t.task},
                {"state", t.state},
                {"unit", t.unit},
                {"cgroup", t.cgroup},
                {"slice", t.slice},
                {"alloc_slice", t.allocSlice},
                {"cpus", t.cpus},
                {"cpu_weight", std::to_string(t.cpuWeight) + " (on " + t.cpuWeightUnit + ")"},
                {"pid", std::to_string(t.pid)},
                {"exit_code", t.exitCode ? std::to_string(*t.exitCode) : "null"},
                {"signal", std::to_string(t.signal)},
                {"oom_killed", b(t.oomKilled)},
                {"started_at", t.startedAt},
                {"finished_at", t.finishedAt},
            };
            for (const auto& [k, v] : lines) std::cout << k << ": " << v << "\n";
        }
        return 0;
    }
    if (cmd == "list") {
        need(0);
        const auto tasks = m->ListTasks();
        if (json) {
            auto arr = nlohmann::json::array();
            for (const auto& t : tasks)
                arr.push_back({{"alloc_id", t.get<0>()}, {"task", t.get<1>()}, {"state", t.get<2>()},
                               {"object_path", std::string(t.get<3>())}});
            std::cout << arr.dump() << "\n";
        } else {
            std::printf("%-38s %-20s %-9s\n", "ALLOC", "TASK", "STATE");
            for (const auto& t : tasks)
                std::printf("%-38s %-20s %-9s\n", t.get<0>().c_str(), t.get<1>().c_str(), t.get<2>().c_str());
        }
        return 0;
    }
    if (cmd == "update") {
        need(3);
        m->UpdateTask(args[0], args[1], readSpec(args[2]));
        return 0;
    }
    if (cmd == "forget") {
        need(2);
        m->ForgetTask(args[0], args[1]);
        return 0;
    }
    if (cmd == "network") return networkCommand(m, args, json);
    if (cmd == "fingerprint") {
        need(0);
        auto j = nlohmann::json::parse(m->Fingerprint(), nullptr, false);
        std::cout << (j.is_discarded() ? m->Fingerprint() : j.dump(json ? -1 : 2)) << "\n";
        return 0;
    }
    die("unknown command '" + cmd + "'; see --help", 2);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    bool json = false;
    if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
        usage(stdout);
        return 0;
    }
    if (!args.empty() && args[0] == "--json") {
        json = true;
        args.erase(args.begin());
    }
    try {
        return run(args, json);
    } catch (const sdbus::Error& e) {
        // One line a person can act on; the error name is for scripts.
        die(e.getMessage() + " (" + e.getName() + ")");
    } catch (const std::exception& e) {
        die(e.what());
    }
}
