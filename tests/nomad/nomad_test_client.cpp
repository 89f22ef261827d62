// A raw gRPC client of nomad-driver-taskscope for what the go-plugin tier
// (tests/goplugin, HashiCorp's own client, which walks a task's whole life)
// does not cover: launches the plugin with the magic cookie, checks the
// handshake line (go-plugin's core protocol 1, Nomad's app protocol 2),
// dials the socket and calls the driver directly. Prints "ok <step>" per
// passed step and stops at the first failure with "FAIL <step>: why"
// (exit 1).
//
// Usage: nomad-test-client PLUGIN CGROUP_VERSION WORKDIR
//        nomad-test-client --bus PLUGIN WORKDIR
// The first (system tier): ExecTask past its deadline, TaskEvents, an
// allocation network with a task in its own root joining it (mounts,
// Nomad's secrets and alloc dirs), Shutdown. The second, the bus tier's
// round (tests/bus/test_nomad_driver.sh): tasks the manager has but Nomad
// holds no handle for, replaced by a new start; open streams ended at
// Shutdown with the plugin-shutdown error.

#define MSGPACK_NO_BOOST 1
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <msgpack.hpp>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base.grpc.pb.h"
#include "driver.grpc.pb.h"
#include "health.grpc.pb.h"
#include "plugin.grpc.pb.h"

namespace {

namespace base = hashicorp::nomad::plugins::base::proto;
namespace pb = hashicorp::nomad::plugins::drivers::proto;
using Clock = std::chrono::steady_clock;

const char* kCookie = "e4327c2e01eabfd75a8a67adb114fb34a757d57eee7728d857a8cec6e91a7255";

pid_t gPlugin = 0;  // the plugin we launched: killed when a step fails

[[noreturn]] void fail(const std::string& step, const std::string& why) {
    if (gPlugin > 0) ::kill(gPlugin, SIGKILL);
    std::printf("FAIL %s: %s\n", step.c_str(), why.c_str());
    std::fflush(stdout);
    std::exit(1);
}

void ok(const std::string& step) {
    std::printf("ok %s\n", step.c_str());
    std::fflush(stdout);
}

void check(bool cond, const std::string& step, const std::string& why) {
    if (!cond) fail(step, why);
}

void checkStatus(const grpc::Status& s, const std::string& step) {
    if (!s.ok()) fail(step, "status " + std::to_string(s.error_code()) + ": " + s.error_message());
}

struct Plugin {
    pid_t pid = 0;
    std::string socket;
    std::shared_ptr<grpc::Channel> channel;
};

Plugin launch(const std::string& path) {
    int out[2];
    if (::pipe(out) != 0) fail("launch", "pipe");
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::close(out[0]);
        ::close(out[1]);
        ::setenv("NOMAD_PLUGIN_MAGIC_COOKIE", kCookie, 1);
        ::execl(path.c_str(), path.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    ::close(out[1]);
    std::string line;
    char c;
    while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
    ::close(out[0]);
    // CORE|APP|NETWORK|ADDRESS|PROTOCOL
    std::vector<std::string> parts;
    std::stringstream ss(line);
    for (std::string p; std::getline(ss, p, '|');) parts.push_back(p);
    check(parts.size() >= 5, "handshake", "bad line '" + line + "'");
    // go-plugin's core protocol 1, Nomad's app protocol 2
    // (plugins/base/plugin.go), an empty server certificate (no AutoMTLS).
    check(line == "1|2|unix|" + parts[3] + "|grpc|", "handshake", "unexpected line '" + line + "'");
    gPlugin = pid;
    Plugin p{pid, parts[3], grpc::CreateChannel("unix:" + parts[3], grpc::InsecureChannelCredentials())};
    return p;
}

std::unique_ptr<grpc::ClientContext> ctx(int seconds = 30) {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
    return c;
}

// go-cty's msgpack of an object value: a map of attribute -> value (an
// attribute the job left out is nil).
std::string ctyConfig(const std::string& command, const std::vector<std::string>& args,
                      const std::string& isolation = "") {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_map(3);
    pk.pack(std::string("args"));
    pk.pack(args);
    pk.pack(std::string("command"));
    pk.pack(command);
    pk.pack(std::string("isolation"));
    if (isolation.empty()) pk.pack_nil();
    else pk.pack(isolation);
    return std::string(buf.data(), buf.size());
}

std::string readFile(const std::string& path) {
    std::string out;
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    ::close(fd);
    return out;
}

bool writeFile(const std::string& path, const std::string& text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return false;
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

// Nomad's client makes a task's directory before StartTask (allocdir):
// <alloc>/<task> with local/ and secrets/.
void makeTaskDir(const std::string& allocDir, const std::string& name) {
    for (const auto& d : {allocDir + "/" + name, allocDir + "/" + name + "/local", allocDir + "/" + name + "/secrets"})
        ::mkdir(d.c_str(), 0755);
}

std::string ctyEnabled() {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_map(1);
    pk.pack(std::string("enabled"));
    pk.pack(true);
    return std::string(buf.data(), buf.size());
}

void baseHandshake(Plugin& p, const std::string& suffix) {
    auto health = grpc::health::v1::Health::NewStub(p.channel);
    grpc::health::v1::HealthCheckRequest hreq;
    hreq.set_service("plugin");
    grpc::health::v1::HealthCheckResponse hres;
    checkStatus(health->Check(ctx().get(), hreq, &hres), "health" + suffix);
    check(hres.status() == grpc::health::v1::HealthCheckResponse::SERVING, "health" + suffix, "not SERVING");
    ok("health" + suffix);

    auto b = base::BasePlugin::NewStub(p.channel);
    base::PluginInfoResponse info;
    checkStatus(b->PluginInfo(ctx().get(), {}, &info), "plugin_info" + suffix);
    check(info.type() == base::DRIVER && info.name() == "taskscope" && info.plugin_api_versions_size() == 1 &&
              info.plugin_api_versions(0) == "v0.1.0",
          "plugin_info" + suffix, info.ShortDebugString());
    ok("plugin_info" + suffix);
    base::ConfigSchemaResponse schema;
    checkStatus(b->ConfigSchema(ctx().get(), {}, &schema), "config_schema" + suffix);
    check(schema.spec().has_object() && schema.spec().object().attributes().count("enabled"), "config_schema" + suffix,
          schema.ShortDebugString());
    base::SetConfigRequest sc;
    sc.set_msgpack_config(ctyEnabled());
    sc.set_plugin_api_version("v0.1.0");
    base::SetConfigResponse scr;
    checkStatus(b->SetConfig(ctx().get(), sc, &scr), "set_config" + suffix);
    ok("set_config" + suffix);
}

pb::TaskConfig taskConfig(const std::string& alloc, const std::string& name, const std::string& dir,
                          const std::string& cmd, const std::vector<std::string>& args,
                          const std::string& isolation = "") {
    pb::TaskConfig t;
    t.set_id(alloc + "/" + name + "/1a2b3c4d");
    t.set_name(name);
    t.set_alloc_id(alloc);
    t.set_job_name("nomad-driver-test");
    t.set_task_group_name("group");
    t.set_msgpack_driver_config(ctyConfig(cmd, args, isolation));
    (*t.mutable_env())["GREETING"] = "hi";
    (*t.mutable_env())["NOMAD_TASK_NAME"] = name;
    t.set_alloc_dir(dir);
    auto* r = t.mutable_resources()->mutable_allocated_resources();
    r->mutable_memory()->set_memory_mb(64);
    r->mutable_cpu()->set_cpu_shares(100);
    return t;
}

pb::StartTaskResponse start(pb::Driver::Stub& d, const pb::TaskConfig& t, const std::string& step) {
    pb::StartTaskRequest req;
    *req.mutable_task() = t;
    pb::StartTaskResponse res;
    checkStatus(d.StartTask(ctx().get(), req, &res), step);
    check(res.result() == pb::StartTaskResponse::SUCCESS && res.handle().version() == 1 &&
              !res.handle().driver_state().empty(),
          step, res.ShortDebugString());
    return res;
}

pb::WaitTaskResponse waitTask(pb::Driver::Stub& d, const std::string& id, const std::string& step) {
    pb::WaitTaskRequest req;
    req.set_task_id(id);
    pb::WaitTaskResponse res;
    checkStatus(d.WaitTask(ctx().get(), req, &res), step);
    return res;
}

grpc::Status inspect(pb::Driver::Stub& d, const std::string& id, pb::InspectTaskResponse& res) {
    pb::InspectTaskRequest req;
    req.set_task_id(id);
    return d.InspectTask(ctx().get(), req, &res);
}

grpc::Status destroy(pb::Driver::Stub& d, const std::string& id, bool force) {
    pb::DestroyTaskRequest req;
    req.set_task_id(id);
    req.set_force(force);
    pb::DestroyTaskResponse res;
    return d.DestroyTask(ctx().get(), req, &res);
}

// Destroyed, and unknown to the driver from then on.
void destroyed(pb::Driver::Stub& d, const std::string& id, bool force, const std::string& step) {
    checkStatus(destroy(d, id, force), step);
    pb::InspectTaskResponse res;
    check(inspect(d, id, res).error_code() == grpc::StatusCode::NOT_FOUND, step, "still known after destroy");
}

void waitExitOf(Plugin& p) {
    int status = 0;
    for (int i = 0; i < 100; ++i) {
        if (::waitpid(p.pid, &status, WNOHANG) == p.pid) {
            check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "shutdown", "plugin exit status " + std::to_string(status));
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    fail("shutdown", "plugin still runs 10 s after Shutdown");
}

// The bus tier's round: handshake, config, fingerprint, a task that ends
// by itself (WaitTask), one stopped (StopTask, WaitTask), both destroyed;
// then Shutdown ends the open streams with the plugin-shutdown error
// (gRPC Unavailable, which Nomad's client turns into ErrPluginShutdown)
// and later calls get it too.
int busRound(const std::string& pluginPath, const std::string& work) {
    const std::string alloc = "nomadbus-" + std::to_string(::getpid());
    const std::string allocDir = work + "/" + alloc;
    ::mkdir(allocDir.c_str(), 0755);
    ::mkdir((allocDir + "/alloc").c_str(), 0755);
    makeTaskDir(allocDir, "quick");
    makeTaskDir(allocDir, "long");

    Plugin p = launch(pluginPath);
    ok("handshake");
    baseHandshake(p, "");
    auto d = pb::Driver::NewStub(p.channel);
    {
        grpc::ClientContext fc;
        auto stream = d->Fingerprint(&fc, {});
        pb::FingerprintResponse f;
        check(stream->Read(&f), "fingerprint", "no first fingerprint");
        check(f.health() == pb::FingerprintResponse::HEALTHY && f.attributes().count("driver.taskscope.version") &&
                  f.attributes().count("unique.cgroups.version"),
              "fingerprint", f.ShortDebugString());
        std::printf("  fingerprint: %s\n", f.ShortDebugString().c_str());
        fc.TryCancel();
    }
    ok("fingerprint");

    // On the host's root: the bus tier has no root of a task's own to give.
    auto quick = taskConfig(alloc, "quick", allocDir, "/bin/sh",
                            {"-c", "[ \"$PWD\" = \"" + allocDir + "/quick\" ] && [ \"$GREETING\" = hi ] && exit 7; exit 9"},
                            "none");
    start(*d, quick, "start_task");
    ok("start_task");
    {
        const auto res = waitTask(*d, quick.id(), "wait_task");
        check(res.result().exit_code() == 7 && res.result().signal() == 0, "wait_task", res.ShortDebugString());
        pb::InspectTaskResponse ires;
        checkStatus(inspect(*d, quick.id(), ires), "wait_task");
        check(ires.task().state() == pb::EXITED && ires.task().result().exit_code() == 7, "wait_task",
              ires.ShortDebugString());
        destroyed(*d, quick.id(), false, "wait_task");
    }
    ok("wait_task");

    auto longTask = taskConfig(alloc, "long", allocDir, "/bin/sleep", {"300"}, "none");
    start(*d, longTask, "stop_task");
    {
        // Destroying a running task without force is refused; it still runs.
        check(destroy(*d, longTask.id(), false).error_code() == grpc::StatusCode::FAILED_PRECONDITION, "stop_task",
              "a running task was destroyed without force");
        // The stand-in systemd keeps no cgroups, so the manager finds no
        // process in the task's scope to send SIGTERM to, and the kill
        // after the grace (KillUnit, which the stand-in delivers) ends it:
        // StopTask returns once the task has exited, either way.
        pb::StopTaskRequest req;
        req.set_task_id(longTask.id());
        req.set_signal("SIGTERM");
        req.mutable_timeout()->set_nanos(500 * 1000 * 1000);
        pb::StopTaskResponse res;
        checkStatus(d->StopTask(ctx().get(), req, &res), "stop_task");
        pb::InspectTaskResponse sres;
        checkStatus(inspect(*d, longTask.id(), sres), "stop_task");
        check(sres.task().state() == pb::EXITED, "stop_task", "StopTask returned before the exit");
        const auto wres = waitTask(*d, longTask.id(), "stop_task");
        check(wres.result().signal() == SIGTERM || wres.result().signal() == SIGKILL, "stop_task",
              wres.ShortDebugString());
        destroyed(*d, longTask.id(), false, "stop_task");
    }
    ok("stop_destroy_task");

    // Tasks the manager has and Nomad holds no handle for (a start Nomad
    // saw fail while the manager finished it, or lost it in a crash; a
    // failed RecoverTask): a new plugin process holds none, and Nomad's
    // new start of the same alloc and task replaces them, running or not.
    {
        auto kept = taskConfig(alloc, "kept", allocDir, "/bin/sleep", {"300"}, "none");
        auto ended = taskConfig(alloc, "ended", allocDir, "/bin/true", {}, "none");
        makeTaskDir(allocDir, "kept");
        makeTaskDir(allocDir, "ended");
        start(*d, kept, "leftover");
        start(*d, ended, "leftover");
        waitTask(*d, ended.id(), "leftover");
        Plugin p2 = launch(pluginPath);
        baseHandshake(p2, " (second plugin)");
        auto d2 = pb::Driver::NewStub(p2.channel);
        for (auto* t : {&kept, &ended}) {
            auto again = *t;
            again.set_id(t->alloc_id() + "/" + t->name() + "/5e6f7a8b");
            start(*d2, again, "leftover");
            pb::InspectTaskResponse ires;
            checkStatus(inspect(*d2, again.id(), ires), "leftover");
            if (t == &kept)
                check(ires.task().state() == pb::RUNNING, "leftover", "the new start: " + ires.ShortDebugString());
            pb::StopTaskRequest sreq;
            sreq.set_task_id(again.id());
            sreq.set_signal("SIGKILL");
            pb::StopTaskResponse sres;
            checkStatus(d2->StopTask(ctx().get(), sreq, &sres), "leftover");
            destroyed(*d2, again.id(), true, "leftover");
        }
        auto ctl = plugin::GRPCController::NewStub(p2.channel);
        plugin::Empty e;
        checkStatus(ctl->Shutdown(ctx().get(), e, &e), "leftover");
        waitExitOf(p2);
    }
    ok("leftover_replaced");

    // A third task, left running, whose stats stream is open at Shutdown.
    auto last = taskConfig(alloc, "last", allocDir, "/bin/sleep", {"300"}, "none");
    makeTaskDir(allocDir, "last");
    start(*d, last, "shutdown");
    {
        grpc::ClientContext sc, fc;
        pb::TaskStatsRequest sreq;
        sreq.set_task_id(last.id());
        sreq.mutable_collection_interval()->set_nanos(200 * 1000 * 1000);
        auto stats = d->TaskStats(&sc, sreq);
        auto finger = d->Fingerprint(&fc, {});
        pb::FingerprintResponse f;
        check(finger->Read(&f), "shutdown", "no fingerprint before shutdown");
        auto ctl = plugin::GRPCController::NewStub(p.channel);
        plugin::Empty e;
        checkStatus(ctl->Shutdown(ctx().get(), e, &e), "shutdown");
        pb::TaskStatsResponse sr;
        while (stats->Read(&sr)) {
        }
        const auto ss = stats->Finish();
        check(ss.error_code() == grpc::StatusCode::UNAVAILABLE, "shutdown",
              "TaskStats ended with " + std::to_string(ss.error_code()) + ": " + ss.error_message());
        while (finger->Read(&f)) {
        }
        const auto fs = finger->Finish();
        check(fs.error_code() == grpc::StatusCode::UNAVAILABLE, "shutdown",
              "Fingerprint ended with " + std::to_string(fs.error_code()) + ": " + fs.error_message());
        std::printf("  open streams at shutdown: TaskStats '%s', Fingerprint '%s'\n", ss.error_message().c_str(),
                    fs.error_message().c_str());
        grpc::ClientContext lc;
        lc.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        auto late = d->TaskStats(&lc, sreq);
        while (late->Read(&sr)) {
        }
        const auto ls = late->Finish();
        check(ls.error_code() == grpc::StatusCode::UNAVAILABLE, "shutdown",
              "TaskStats after shutdown: " + std::to_string(ls.error_code()) + ": " + ls.error_message());
        waitExitOf(p);
    }
    ok("shutdown");
    std::printf("all ok\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::strcmp(argv[1], "--bus") == 0) return busRound(argv[2], argv[3]);
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s PLUGIN CGROUP_VERSION WORKDIR | --bus PLUGIN WORKDIR\n", argv[0]);
        return 2;
    }
    const std::string pluginPath = argv[1], work = argv[3];
    const std::string alloc = "nomadtest-" + std::to_string(::getpid());
    const std::string allocDir = work + "/" + alloc;
    ::mkdir(allocDir.c_str(), 0755);
    ::mkdir((allocDir + "/alloc").c_str(), 0755);
    makeTaskDir(allocDir, "web");

    Plugin p = launch(pluginPath);
    ok("handshake");
    baseHandshake(p, "");
    auto d = pb::Driver::NewStub(p.channel);

    // A running task for what the go-plugin tier does not cover: ExecTask
    // past its deadline, and the TaskEvents stream.
    auto web = taskConfig(alloc, "web", allocDir, "/bin/sh",
                          {"-c", "trap 'exit 143' TERM; while :; do sleep 0.1; done"});
    start(*d, web, "start_task");
    ok("start_task");
    {
        pb::ExecTaskRequest req;
        req.set_task_id(web.id());
        req.add_command("/bin/sh");
        req.add_command("-c");
        req.add_command("sleep 30");
        req.mutable_timeout()->set_seconds(1);
        pb::ExecTaskResponse res;
        const auto t1 = Clock::now();
        auto st = d->ExecTask(ctx().get(), req, &res);
        check(st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && Clock::now() - t1 < std::chrono::seconds(10),
              "exec_timeout", "timeout gave status " + std::to_string(st.error_code()) + ": " + st.error_message());
    }
    ok("exec_timeout");
    {
        grpc::ClientContext ec;
        auto stream = d->TaskEvents(&ec, {});
        ec.TryCancel();
        pb::DriverTaskEvent ev;
        while (stream->Read(&ev)) {
        }
    }
    ok("task_events");
    {
        pb::StopTaskRequest req;
        req.set_task_id(web.id());
        req.set_signal("SIGTERM");
        req.mutable_timeout()->set_seconds(5);
        pb::StopTaskResponse res;
        checkStatus(d->StopTask(ctx().get(), req, &res), "stop_task");
        destroyed(*d, web.id(), false, "stop_task");
    }
    ok("stop_destroy_task");

    // An allocation network, as Nomad asks a driver with
    // must_create_network before the group's first task; Nomad's CNI
    // setup, which would then wire the namespace, is played by a dummy
    // interface added into it.
    const std::string netAlloc = alloc + "-net";
    const std::string netns = "/run/netns/" + netAlloc;
    const std::string netDir = work + "/" + netAlloc;
    {
        pb::CreateNetworkRequest req;
        req.set_alloc_id(netAlloc);
        req.set_hostname("nomadtest");
        pb::CreateNetworkResponse res;
        checkStatus(d->CreateNetwork(ctx().get(), req, &res), "create_network");
        check(res.created() && res.isolation_spec().mode() == pb::NetworkIsolationSpec::GROUP &&
                  res.isolation_spec().path() == netns && exists(netns),
              "create_network", res.ShortDebugString());
        pb::CreateNetworkResponse again;
        checkStatus(d->CreateNetwork(ctx().get(), req, &again), "create_network");
        check(!again.created() && again.isolation_spec().path() == netns, "create_network",
              "second call: " + again.ShortDebugString());
        const std::string add = "ip -n " + netAlloc + " link add nt0 type dummy";
        check(std::system(add.c_str()) == 0, "create_network", add + " failed");
    }
    ok("create_network");

    // A task in its own root (the default), in the allocation's network,
    // with a read-only mount and Nomad's secrets: it writes what it sees
    // into its local/, which is the host's <task dir>/local.
    {
        ::mkdir(netDir.c_str(), 0755);
        ::mkdir((netDir + "/alloc").c_str(), 0755);
        makeTaskDir(netDir, "iso");
        ::mkdir((work + "/data").c_str(), 0755);
        check(writeFile(work + "/data/marker", "from-the-host\n") &&
                  writeFile(netDir + "/iso/secrets/token", "nomad-secret\n"),
              "isolated_task", "write the host's files");
        auto iso = taskConfig(netAlloc, "iso", netDir, "/bin/sh",
                              {"-c", "cat /proc/net/dev > /local/netdev; ls -1 / > /local/root; "
                                     "cat /data/marker > /local/marker; cat /secrets/token > /local/secret; "
                                     "if touch /data/x 2>/dev/null; then echo rw; else echo ro; fi > /local/mode; "
                                     "echo ok > /alloc/shared"});
        // It writes into alloc/ itself, which Nomad makes 0755 (only its
        // subdirs are 0777): root, said as a job says it (an isolated task
        // without a user runs as nobody, as under exec).
        iso.set_user("root");
        auto* m = iso.add_mounts();
        m->set_host_path(work + "/data");
        m->set_task_path("/data");
        m->set_readonly(true);
        iso.mutable_network_isolation_spec()->set_mode(pb::NetworkIsolationSpec::GROUP);
        iso.mutable_network_isolation_spec()->set_path(netns);
        const auto ti = Clock::now();
        start(*d, iso, "isolated_task");
        std::printf("  isolated start_task took %.1f ms\n",
                    std::chrono::duration<double, std::milli>(Clock::now() - ti).count());
        pb::WaitTaskRequest wreq;
        wreq.set_task_id(iso.id());
        pb::WaitTaskResponse wres;
        checkStatus(d->WaitTask(ctx().get(), wreq, &wres), "isolated_task");
        check(wres.result().exit_code() == 0, "isolated_task", wres.ShortDebugString());
        const auto local = netDir + "/iso/local/";
        const auto netdev = readFile(local + "netdev"), root = readFile(local + "root");
        std::printf("  the task's /proc/net/dev:\n%s", netdev.c_str());
        check(netdev.find("nt0:") != std::string::npos && netdev.find("lo:") != std::string::npos,
              "isolated_task", "the task does not see its allocation's interfaces");
        // Only lo and nt0: every other line is a header.
        int ifaces = 0;
        for (size_t pos = 0; (pos = netdev.find(':', pos)) != std::string::npos; ++pos) ++ifaces;
        check(ifaces == 2, "isolated_task", "the task sees other interfaces too");
        check(readFile("/proc/net/dev").find("nt0:") == std::string::npos, "isolated_task",
              "the allocation's interface is on the host");
        check(root.find("local\n") != std::string::npos && root.find("secrets\n") != std::string::npos &&
                  root.find("data\n") != std::string::npos && root.find("var\n") == std::string::npos,
              "isolated_task", "not its own root: '" + root + "'");
        check(readFile(local + "marker") == "from-the-host\n" && readFile(local + "mode") == "ro\n", "isolated_task",
              "mount: '" + readFile(local + "marker") + "' " + readFile(local + "mode"));
        check(readFile(local + "secret") == "nomad-secret\n", "isolated_task", "Nomad's secrets/ not seen");
        check(readFile(netDir + "/alloc/shared") == "ok\n", "isolated_task", "the shared alloc dir is not /alloc");
        pb::DestroyTaskRequest dreq;
        dreq.set_task_id(iso.id());
        pb::DestroyTaskResponse dres;
        checkStatus(d->DestroyTask(ctx().get(), dreq, &dres), "isolated_task");
        // A namespace that is not the allocation's is refused, fatally.
        auto other = iso;
        other.set_id(netAlloc + "/other/1");
        other.set_name("other");
        other.mutable_network_isolation_spec()->set_path("/run/netns/elsewhere");
        pb::StartTaskRequest sreq;
        *sreq.mutable_task() = other;
        pb::StartTaskResponse sres;
        auto st = d->StartTask(ctx().get(), sreq, &sres);
        check(!st.ok() && st.error_message().find("InvalidConfig") != std::string::npos, "isolated_task",
              "a foreign namespace path was accepted: " + st.error_message());
    }
    ok("isolated_task");

    {
        pb::DestroyNetworkRequest req;
        req.set_alloc_id(netAlloc);
        req.mutable_isolation_spec()->set_mode(pb::NetworkIsolationSpec::GROUP);
        req.mutable_isolation_spec()->set_path(netns);
        pb::DestroyNetworkResponse res;
        checkStatus(d->DestroyNetwork(ctx().get(), req, &res), "destroy_network");
        check(!exists(netns), "destroy_network", netns + " is still there");
        checkStatus(d->DestroyNetwork(ctx().get(), req, &res), "destroy_network");  // gone already: fine
    }
    ok("destroy_network");

    {
        auto ctl = plugin::GRPCController::NewStub(p.channel);
        plugin::Empty e;
        checkStatus(ctl->Shutdown(ctx().get(), e, &e), "shutdown");
        waitExitOf(p);
        struct stat st {};
        check(::stat(p.socket.c_str(), &st) != 0, "shutdown", "socket left behind");
    }
    ok("shutdown");
    std::printf("all ok\n");
    return 0;
}
