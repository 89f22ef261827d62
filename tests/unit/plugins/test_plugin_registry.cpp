#define BOOST_TEST_MODULE plugin_registry
#include <boost/test/unit_test.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "plugins/identity_client.hpp"
#include "spec/task_spec.hpp"
#include "plugins/plugin_registry.hpp"
#include "support/temp_dir.hpp"

using namespace taskscope;
using namespace std::chrono_literals;
using task::TaskRecord;
using task::TaskState;
using plugins::IdentityAnswer;
using plugins::PluginEntry;

namespace {

struct Heard final : plugins::PluginEvents {
    std::vector<std::string> log;
    void pluginRegistered(const PluginEntry& p, bool announce) override {
        log.push_back("registered " + p.spec.name + " " + (p.healthy ? "healthy" : "unhealthy") + " " + p.provider +
                      (announce ? "" : " quietly") + " | " + p.message);
    }
    void pluginChanged(const PluginEntry& p, bool healthChanged) override {
        if (healthChanged) log.push_back("health " + p.spec.name + " " + (p.healthy ? "healthy" : "unhealthy"));
    }
    void pluginDeregistered(const PluginEntry& p, const std::string& reason) override {
        log.push_back("deregistered " + p.spec.name + " | " + reason);
    }
};

TaskRecord pluginTask(const std::string& alloc, const std::string& name, const std::string& pluginName,
                TaskState state = TaskState::Running, int64_t timeoutMs = 60000) {
    TaskRecord r;
    r.allocId = alloc;
    r.name = name;
    r.state = state;
    r.specText = nlohmann::json{{"command", "/bin/true"},
                                {"plugin",
                                 {{"type", "csi"},
                                  {"name", pluginName},
                                  {"health_interval_ms", 100},
                                  {"socket_timeout_ms", timeoutMs}}}}
                     .dump();
    r.spec = *spec::parseTaskSpec(r.specText);
    return r;
}

spec::TaskSpec specOf(const TaskRecord& r) { return r.spec; }

// A bound unix socket: what the registry waits for before it probes.
void listenAt(const std::string& path) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    ::listen(fd, 1);
}

void runFor(common::EventLoop& loop, std::chrono::milliseconds d) {
    loop.addTimer(common::EventLoop::Clock::now() + d, [&loop] { loop.quit(); });
    loop.run();
}

struct Fixture {
    test::TempDir dir;
    common::EventLoop loop;
    plugins::ProbeWorker worker{loop};
    std::vector<TaskRecord> tasks;
    std::atomic<bool> ready{true};
    std::atomic<int> probes{0};
    Heard heard;
    plugins::PluginRegistry registry{
        dir.path, "/org/taskscope/Manager1/plugins", loop, worker,
        [this](const std::string&, bool withInfo) -> common::Result<IdentityAnswer> {
            ++probes;
            IdentityAnswer a;
            a.ready = ready.load();
            a.message = a.ready ? "" : "Probe: not ready";
            if (withInfo) {
                a.haveInfo = true;
                a.provider = "org.example.csi";
                a.version = "1.0";
            }
            return a;
        },
        [this] {
            std::vector<const TaskRecord*> out;
            for (const auto& t : tasks) out.push_back(&t);
            return out;
        }};
    Fixture() { registry.attach(heard); }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_second_live_claimant_of_a_name_is_refused, Fixture) {
    tasks.push_back(pluginTask("a", "p", "hostpath"));
    auto spec = specOf(tasks[0]);
    auto r = registry.prepareStart("b", "p", spec);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error().name == "PluginNameInUse");
    BOOST_TEST(r.error().message.find("a/p") != std::string::npos);
    BOOST_TEST(spec.env.empty());
    // Once the first task has ended the name is free again.
    tasks[0].state = TaskState::Exited;
    BOOST_REQUIRE(registry.prepareStart("b", "p", spec));
    BOOST_TEST(spec.env["CSI_ENDPOINT"] == "unix://" + dir.path + "/csi/hostpath/csi.sock");
    BOOST_TEST(std::filesystem::is_directory(dir.path + "/csi/hostpath"));
    BOOST_TEST(spec.isolation.volumes.empty());
}

BOOST_FIXTURE_TEST_CASE(an_isolated_plugin_sees_its_directory_at_mount_dir, Fixture) {
    tasks.push_back(pluginTask("a", "p", "hostpath"));
    auto spec = specOf(tasks[0]);
    spec.isolation.filesystem = true;
    BOOST_REQUIRE(registry.prepareStart("a", "p", spec));
    BOOST_TEST(spec.env["CSI_ENDPOINT"] == "unix:///csi/csi.sock");
    BOOST_REQUIRE(spec.isolation.volumes.size() == 1u);
    BOOST_TEST(spec.isolation.volumes[0].source == dir.path + "/csi/hostpath");
    BOOST_TEST(spec.isolation.volumes[0].target == "/csi");
    BOOST_TEST(!spec.isolation.volumes[0].readOnly);
    BOOST_TEST((spec.isolation.volumes[0].propagation == spec::Propagation::Bidirectional));
}

BOOST_FIXTURE_TEST_CASE(a_socket_that_never_appears_registers_an_unhealthy_plugin, Fixture) {
    tasks.push_back(pluginTask("a", "p", "silent", TaskState::Running, 200));
    registry.taskChanged(tasks[0]);
    runFor(loop, 100ms);
    BOOST_TEST(heard.log.empty());  // still within the timeout
    runFor(loop, 400ms);
    BOOST_REQUIRE(heard.log.size() == 1u);
    BOOST_TEST(heard.log[0].starts_with("registered silent unhealthy"));
    BOOST_TEST(heard.log[0].find("did not appear within 200 ms") != std::string::npos);
    BOOST_TEST(probes.load() == 0);
    // Later checks keep the reason: the socket never came, it is not "gone".
    runFor(loop, 300ms);
    BOOST_REQUIRE(registry.list().size() == 1u);
    BOOST_TEST(registry.list()[0]->message.find("did not appear within 200 ms") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(registered_probed_and_deregistered_with_its_task, Fixture) {
    tasks.push_back(pluginTask("a", "p", "hostpath"));
    auto spec = specOf(tasks[0]);
    BOOST_REQUIRE(registry.prepareStart("a", "p", spec));
    listenAt(dir.path + "/csi/hostpath/csi.sock");
    registry.taskChanged(tasks[0]);
    runFor(loop, 300ms);
    BOOST_REQUIRE(!heard.log.empty());
    BOOST_TEST(heard.log[0] == "registered hostpath healthy org.example.csi | ready");
    BOOST_TEST(std::filesystem::exists(dir.path + "/csi/hostpath.json"));
    BOOST_TEST(registry.list().size() == 1u);

    ready = false;
    runFor(loop, 300ms);
    BOOST_REQUIRE(heard.log.size() == 2u);
    BOOST_TEST(heard.log[1] == "health hostpath unhealthy");
    // The record holds the new health, for a restart to start from.
    BOOST_TEST(test::slurp(dir.path + "/csi/hostpath.json").find("\"healthy\":false") != std::string::npos);

    tasks[0].state = TaskState::Exited;
    tasks[0].exit.exitCode = 3;
    registry.taskExited(tasks[0]);
    BOOST_REQUIRE(heard.log.size() == 3u);
    BOOST_TEST(heard.log[2] == "deregistered hostpath | its task exited with code 3");
    BOOST_TEST(registry.list().empty());
    BOOST_TEST(!std::filesystem::exists(dir.path + "/csi/hostpath.json"));
    BOOST_TEST(!std::filesystem::exists(dir.path + "/csi/hostpath/csi.sock"));
    // No probe after the end reaches anyone.
    runFor(loop, 250ms);
    BOOST_TEST(heard.log.size() == 3u);
}

BOOST_FIXTURE_TEST_CASE(a_restart_republishes_quietly_and_drops_plugins_of_ended_tasks, Fixture) {
    tasks.push_back(pluginTask("a", "p", "kept"));
    tasks.push_back(pluginTask("a", "q", "gone"));
    for (auto& t : tasks) {
        auto spec = specOf(t);
        BOOST_REQUIRE(registry.prepareStart(t.allocId, t.name, spec));
        listenAt(dir.path + "/csi/" + t.spec.plugin->name + "/csi.sock");
        registry.taskChanged(t);
    }
    runFor(loop, 300ms);
    BOOST_REQUIRE(registry.list().size() == 2u);

    // A new manager: "gone"'s task ended while it was away.
    tasks[1].state = TaskState::Exited;
    Heard after;
    plugins::PluginRegistry again(dir.path, "/org/taskscope/Manager1/plugins", loop, worker,
                                  [](const std::string&, bool) -> common::Result<IdentityAnswer> {
                                      IdentityAnswer a;
                                      a.ready = true;
                                      return a;
                                  },
                                  [this] {
                                      std::vector<const TaskRecord*> out;
                                      for (const auto& t : tasks) out.push_back(&t);
                                      return out;
                                  });
    again.attach(after);
    again.recover();
    runFor(loop, 300ms);
    BOOST_REQUIRE(after.log.size() == 2u);
    std::sort(after.log.begin(), after.log.end());
    BOOST_TEST(after.log[0] == "deregistered gone | its task ended while the manager was away");
    BOOST_TEST(after.log[1].starts_with("registered kept"));
    BOOST_TEST(after.log[1].find("quietly") != std::string::npos);
    BOOST_REQUIRE(again.list().size() == 1u);
    BOOST_TEST(again.list()[0]->provider == "org.example.csi");  // from the record, not re-announced
    // The socket goes with the registration (issue 32), the live one stays.
    BOOST_TEST(!std::filesystem::exists(dir.path + "/csi/gone/csi.sock"));
    BOOST_TEST(std::filesystem::exists(dir.path + "/csi/kept/csi.sock"));
}

// The plugin's task can write its socket directory: a link there in place
// of the socket (to another daemon's socket) is not the plugin's socket,
// and the manager never connects to what it points to.
BOOST_FIXTURE_TEST_CASE(a_symlink_in_place_of_the_socket_is_never_probed, Fixture) {
    tasks.push_back(pluginTask("a", "p", "linked", TaskState::Running, 200));
    auto spec = specOf(tasks[0]);
    BOOST_REQUIRE(registry.prepareStart("a", "p", spec));
    listenAt(dir.path + "/elsewhere.sock");
    std::filesystem::create_symlink(dir.path + "/elsewhere.sock", dir.path + "/csi/linked/csi.sock");
    registry.taskChanged(tasks[0]);
    runFor(loop, 500ms);
    BOOST_REQUIRE(heard.log.size() == 1u);
    BOOST_TEST(heard.log[0].find("did not appear within 200 ms") != std::string::npos, heard.log[0]);
    BOOST_TEST(probes.load() == 0);
    // And the real prober refuses the link by itself, never reaching the socket.
    auto answer = plugins::queryIdentity(dir.path + "/csi/linked/csi.sock", false, 200ms);
    BOOST_REQUIRE(!answer);
    BOOST_TEST(answer.error().name == "PluginUnreachable");
    BOOST_TEST(answer.error().message.find("Too many levels of symbolic links") != std::string::npos,
               answer.error().message);
}

// A registration whose field has another type (a torn or foreign file) is
// removed with a warning: it threw out of recover() and stopped the
// manager at every start (issue 58, found reading the parsers to fuzz).
BOOST_FIXTURE_TEST_CASE(a_registration_of_the_wrong_shape_is_removed, Fixture) {
    std::filesystem::create_directories(dir.path + "/csi");
    const auto bad = dir.path + "/csi/bad.json";
    { std::ofstream(bad) << R"({"type":1,"name":"bad"})"; }
    BOOST_CHECK_NO_THROW(registry.recover());
    BOOST_TEST(!std::filesystem::exists(bad));
    BOOST_TEST(registry.list().empty());
}
