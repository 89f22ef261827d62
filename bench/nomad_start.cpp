// nomad-driver-taskscope's StartTask against its floor, taskscope's own
// StartTask over D-Bus, interleaved one of each per round (same spec,
// same guest): driver - gRPC StartTask to its reply (the task runs in its
// scope then); floor - Manager1.StartTask to its reply. Prints medians and
// the median of per-round ratios; then where the driver's time goes (the
// plugin's debug step records, TASKSCOPE_NOMAD_LOG=debug, placed against
// this process's clock: gRPC in, the plugin's steps, gRPC out); then the
// plugin's RSS with N tasks.
// Usage: taskscope-bench-nomad PLUGIN [ROUNDS] [TASKS]
//        taskscope-bench-nomad PLUGIN --options [ROUNDS]
// --options (issue 47): an exec-style job (its own root) with every new
// key set (cap_drop/cap_add, pid_mode, ipc_mode, work_dir, ulimit,
// oom_score_adj, io_weight, denied_envvars) against the same job with
// command and args only, both through the driver, one of each per round
// in alternating order: the options' own cost, ratio of medians and the
// median per-round ratio.

#define MSGPACK_NO_BOOST 1
#include <grpcpp/grpcpp.h>
#include <msgpack.hpp>
#include <sdbus-c++/sdbus-c++.h>
#include <signal.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/sdbus_compat.hpp"
#include "driver.grpc.pb.h"

namespace {

namespace pb = hashicorp::nomad::plugins::drivers::proto;
using Clock = std::chrono::steady_clock;

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

int64_t monoUs() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// The plugin's stderr (its debug records) goes to `logPath`.
std::pair<pid_t, std::string> launch(const char* path, const std::string& logPath) {
    int out[2];
    if (::pipe(out) != 0) std::exit(1);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out[1], 1);
        const int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (log >= 0) ::dup2(log, 2);
        ::setenv("TASKSCOPE_NOMAD_LOG", "debug", 1);
        ::setenv("NOMAD_PLUGIN_MAGIC_COOKIE", "e4327c2e01eabfd75a8a67adb114fb34a757d57eee7728d857a8cec6e91a7255", 1);
        ::execl(path, path, static_cast<char*>(nullptr));
        _exit(127);
    }
    ::close(out[1]);
    std::string line;
    char c;
    while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
    std::vector<std::string> parts;
    std::stringstream ss(line);
    for (std::string p; std::getline(ss, p, '|');) parts.push_back(p);
    // CORE|APP|unix|SOCKET|grpc[|CERT]: 5 fields from older builds, 6 now.
    if (parts.size() < 5) {
        std::fprintf(stderr, "bad handshake '%s'\n", line.c_str());
        std::exit(1);
    }
    return {pid, parts[3]};
}

// isolation = "none": the driver then sends the floor's spec exactly
// (an isolated task would time the root's setup, not the driver).
std::string ctyConfig() {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_map(3);
    pk.pack(std::string("command"));
    pk.pack(std::string("/bin/sleep"));
    pk.pack(std::string("args"));
    pk.pack(std::vector<std::string>{"3600"});
    pk.pack(std::string("isolation"));
    pk.pack(std::string("none"));
    return std::string(buf.data(), buf.size());
}

// An exec-style job's config block: command and args, and with `options`
// every key issue 47 added that a task in its own root takes.
std::string execStyleConfig(bool options) {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_map(options ? 11 : 2);
    pk.pack(std::string("command"));
    pk.pack(std::string("/bin/sleep"));
    pk.pack(std::string("args"));
    pk.pack(std::vector<std::string>{"3600"});
    if (!options) return std::string(buf.data(), buf.size());
    pk.pack(std::string("cap_drop"));
    pk.pack(std::vector<std::string>{"all"});
    pk.pack(std::string("cap_add"));
    pk.pack(std::vector<std::string>{"chown", "kill"});
    pk.pack(std::string("pid_mode"));
    pk.pack(std::string("private"));
    pk.pack(std::string("ipc_mode"));
    pk.pack(std::string("private"));
    pk.pack(std::string("work_dir"));
    pk.pack(std::string("/tmp"));
    pk.pack(std::string("ulimit"));
    pk.pack(std::map<std::string, std::string>{{"nofile", "4096:8192"}, {"nproc", "2000"}, {"core", "0"}});
    pk.pack(std::string("oom_score_adj"));
    pk.pack(300);
    pk.pack(std::string("io_weight"));
    pk.pack(200);
    pk.pack(std::string("denied_envvars"));
    pk.pack(std::vector<std::string>{"AWS_*", "*_TOKEN"});
    return std::string(buf.data(), buf.size());
}

long rssKb(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    for (std::string l; std::getline(f, l);)
        if (l.rfind("VmRSS:", 0) == 0) return std::stol(l.substr(6));
    return -1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s PLUGIN [ROUNDS] [TASKS]\n", argv[0]);
        return 2;
    }
    const bool optionsMode = argc > 2 && std::string(argv[2]) == "--options";
    if (optionsMode) {
        argv[2] = argv[1];
        ++argv;
        --argc;
    }
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 30, tasks = argc > 3 ? std::atoi(argv[3]) : 100;
    const std::string logPath = "/tmp/taskscope-bench-nomad." + std::to_string(::getpid()) + ".log";
    auto [pid, socket] = launch(argv[1], logPath);
    auto d = pb::Driver::NewStub(grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
    // TASKSCOPE_BUS_ADDRESS (the bus tier's private bus, which the plugin
    // follows too): the driver's own cost stands out against a floor
    // without systemd's.
    const char* busAddress = std::getenv("TASKSCOPE_BUS_ADDRESS");
    auto conn = busAddress && *busAddress ? sdbus::createSessionBusConnectionWithAddress(busAddress)
                                          : sdbus::createSystemBusConnection();
    auto mgr = sdbus::createProxy(*conn, taskscope::sdbus_compat::ServiceName{"org.taskscope.Manager1"},
                                  sdbus::ObjectPath{"/org/taskscope/Manager1"});
    const std::string alloc = "nbench" + std::to_string(::getpid());
    // What the driver makes of ctyConfig() for a task without alloc_dir.
    const std::string spec = R"({"args":["3600"],"command":"/bin/sleep"})";
    auto stopBoth = [&](const std::string& t) {
        mgr->callMethod("StopTask").onInterface("org.taskscope.Manager1").withArguments(alloc, t, std::string("SIGKILL"), int64_t{0});
    };
    std::vector<double> drv, flr, ratio;
    std::vector<std::string> started;
    std::map<std::string, std::pair<int64_t, int64_t>> sent;  // task id -> this side's send, reply (monotonic us)
    auto driverStart = [&](const std::string& name) {
        pb::StartTaskRequest req;
        auto* t = req.mutable_task();
        t->set_id(alloc + "/" + name + "/x");
        t->set_alloc_id(alloc);
        t->set_name(name);
        t->set_msgpack_driver_config(ctyConfig());
        pb::StartTaskResponse res;
        grpc::ClientContext ctx;
        const int64_t m0 = monoUs();
        const auto t0 = Clock::now();
        auto st = d->StartTask(&ctx, req, &res);
        const double took = ms(Clock::now() - t0);
        sent[t->id()] = {m0, monoUs()};
        if (!st.ok()) {
            std::fprintf(stderr, "driver StartTask: %s\n", st.error_message().c_str());
            std::exit(1);
        }
        return took;
    };
    // The tasks forgotten once stopped, the plugin ended.
    auto finish = [&] {
        ::sleep(2);
        for (const auto& t : started) {
            try {
                mgr->callMethod("ForgetTask").onInterface("org.taskscope.Manager1").withArguments(alloc, t);
            } catch (const sdbus::Error&) {
            }
        }
        ::kill(pid, SIGTERM);
        ::waitpid(pid, nullptr, 0);
        ::unlink(logPath.c_str());
        return 0;
    };
    if (optionsMode) {
        auto execStart = [&](const std::string& name, bool options) {
            pb::StartTaskRequest req;
            auto* t = req.mutable_task();
            t->set_id(alloc + "/" + name + "/x");
            t->set_alloc_id(alloc);
            t->set_name(name);
            t->set_user("nobody");
            (*t->mutable_env())["GITHUB_TOKEN"] = "x";
            (*t->mutable_env())["KEPT"] = "y";
            t->set_msgpack_driver_config(execStyleConfig(options));
            pb::StartTaskResponse res;
            grpc::ClientContext ctx;
            const auto t0 = Clock::now();
            auto st = d->StartTask(&ctx, req, &res);
            const double took = ms(Clock::now() - t0);
            if (!st.ok()) {
                std::fprintf(stderr, "driver StartTask (%s): %s\n", options ? "options" : "plain",
                             st.error_message().c_str());
                std::exit(1);
            }
            return took;
        };
        std::vector<double> withOptions, plain, perRound;
        for (int i = 0; i < rounds; ++i) {
            const std::string a = "o" + std::to_string(i), b = "p" + std::to_string(i);
            double x, y;
            if (i % 2 == 0) {
                x = execStart(a, true);
                y = execStart(b, false);
            } else {
                y = execStart(b, false);
                x = execStart(a, true);
            }
            withOptions.push_back(x);
            plain.push_back(y);
            perRound.push_back(x / y);
            stopBoth(a);
            stopBoth(b);
            started.push_back(a);
            started.push_back(b);
        }
        std::printf("exec-style StartTask through the driver, own root, %d rounds: with issue 47's options median "
                    "%.2f ms, command and args only (floor) median %.2f ms, ratio of medians %.3f, median per-round "
                    "ratio %.3f\n",
                    rounds, median(withOptions), median(plain), median(withOptions) / median(plain), median(perRound));
        std::sort(plain.begin(), plain.end());
        std::printf("floor spread (ms): min %.2f p25 %.2f median %.2f p75 %.2f max %.2f\n", plain.front(),
                    plain[plain.size() / 4], plain[plain.size() / 2], plain[plain.size() * 3 / 4], plain.back());
        return finish();
    }
    for (int i = 0; i < rounds; ++i) {
        const std::string a = "d" + std::to_string(i), b = "f" + std::to_string(i);
        auto floorStart = [&] {
            const auto t0 = Clock::now();
            sdbus::ObjectPath path;
            mgr->callMethod("StartTask").onInterface("org.taskscope.Manager1").withArguments(alloc, b, spec).storeResultsTo(path);
            return ms(Clock::now() - t0);
        };
        // Who goes first alternates: the first start of a round meets the
        // manager still busy with the previous round's stops.
        double x, y;
        if (i % 2 == 0) {
            x = driverStart(a);
            y = floorStart();
        } else {
            y = floorStart();
            x = driverStart(a);
        }
        drv.push_back(x);
        flr.push_back(y);
        ratio.push_back(x / y);
        stopBoth(a);
        stopBoth(b);
        started.push_back(a);
        started.push_back(b);
    }
    std::printf("StartTask, %d rounds: driver (gRPC) median %.2f ms, taskscope D-Bus (floor) median %.2f ms, "
                "ratio of medians %.2f, median per-round ratio %.2f\n",
                rounds, median(drv), median(flr), median(drv) / median(flr), median(ratio));
    // Where the driver's time went, per round, from the plugin's records.
    std::map<std::string, std::vector<double>> parts;
    {
        std::ifstream log(logPath);
        for (std::string l; std::getline(log, l);) {
            auto j = nlohmann::json::parse(l, nullptr, false);
            if (j.is_discarded() || j.value("@message", "") != "StartTask steps") continue;
            auto it = sent.find(j.value("task_id", ""));
            if (it == sent.end()) continue;
            const int64_t in = j["mono_start_us"].get<int64_t>(), total = j["total_us"].get<int64_t>();
            parts["grpc_in"].push_back((in - it->second.first) / 1000.0);
            parts["grpc_out"].push_back((it->second.second - in - total) / 1000.0);
            for (const char* k : {"spec_us", "acquire_us", "dbus_start_us", "reply_us"})
                if (j.contains(k)) parts[k].push_back(j[k].get<int64_t>() / 1000.0);
            // All but its own Manager1.StartTask, which is the floor's call.
            if (j.contains("dbus_start_us"))
                parts["own"].push_back((it->second.second - it->second.first - j["dbus_start_us"].get<int64_t>()) /
                                       1000.0);
        }
    }
    std::printf("driver StartTask by step (medians, ms):");
    for (const char* k : {"grpc_in", "spec_us", "acquire_us", "dbus_start_us", "reply_us", "grpc_out"})
        std::printf(" %s %.2f", k, median(parts[k]));
    std::printf("\n");
    // The floor's noise (the manager, systemd) does not enter this one.
    const double own = median(parts["own"]);
    std::printf("driver's own cost (its call minus its Manager1.StartTask): median %.2f ms; "
                "on the floor's median: ratio %.3f\n",
                own, (median(flr) + own) / median(flr));
    std::sort(flr.begin(), flr.end());
    if (!flr.empty())
        std::printf("floor spread (ms): min %.2f p25 %.2f median %.2f p75 %.2f max %.2f\n", flr.front(),
                    flr[flr.size() / 4], flr[flr.size() / 2], flr[flr.size() * 3 / 4], flr.back());
    const long before = rssKb(pid);
    for (int i = 0; i < tasks; ++i) {
        const std::string n = "r" + std::to_string(i);
        driverStart(n);
        started.push_back(n);
    }
    std::printf("plugin RSS: %ld kB idle-after-rounds, %ld kB with %d more running tasks\n", before, rssKb(pid), tasks);
    for (int i = 0; i < tasks; ++i) stopBoth("r" + std::to_string(i));
    return finish();
}
