// taskscope-manager: runs tasks in transient systemd scopes and serves
// org.taskscope.Manager1 on the system bus.

#include <getopt.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sysexits.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sdbus-c++/sdbus-c++.h>

#include "common/daemon.hpp"
#include "common/event_loop.hpp"
#include "common/log.hpp"
#include "common/sdbus_compat.hpp"
#include "fingerprint/fingerprint.hpp"
#include "manager/daemon/bus_adaptor.hpp"
#include "manager/daemon/config_file.hpp"
#include "manager/daemon/journal_notes.hpp"
#include "manager/daemon/systemd_support.hpp"
#include "manager/daemon/task_events_fanout.hpp"
#include "manager/records/log_spool.hpp"
#include "manager/tasks/scope_reconciler.hpp"
#include "manager/tasks/task_registry.hpp"
#include "network/network_manager.hpp"
#include "plugins/identity_client.hpp"
#include "plugins/plugin_registry.hpp"
#include "plugins/probe_worker.hpp"
#include "plugins/registry_bus.hpp"
#include "scope/cgroup_host.hpp"
#include "scope/sdbus_systemd_client.hpp"

#ifndef TASKSCOPE_VERSION
#define TASKSCOPE_VERSION "0.0.0"
#endif
#ifndef TASKSCOPE_SHIM_DEFAULT
#define TASKSCOPE_SHIM_DEFAULT "/usr/libexec/taskscope/taskscope-shim"
#endif

namespace {

using namespace taskscope;

constexpr const char* kBusName = "org.taskscope.Manager1";

struct Options {
    bool verbose = false;
    std::string config = "/etc/taskscope/manager.json";
    std::string busAddress;      // empty: the system bus
    std::string systemdAddress;  // empty: the system bus
    std::string stateDir;
    std::string shim;
};

void usage(FILE* out) {
    std::fprintf(out,
                 "Usage: taskscope-manager [OPTIONS]\n"
                 "Runs tasks in transient systemd scopes; serves %s on the system bus.\n\n"
                 "  -c, --config PATH          config file (default /etc/taskscope/manager.json, plus PATH.d/)\n"
                 "      --bus-address ADDR     serve on this bus instead of the system bus (tests)\n"
                 "      --systemd-address ADDR reach systemd on this bus instead of the system bus\n"
                 "      --state-dir DIR        override state_dir\n"
                 "      --shim PATH            override shim_path\n"
                 "  -v, --verbose              debug logging\n"
                 "  -h, --help                 this help\n",
                 kBusName);
}

bool parseOptions(int argc, char** argv, Options& o) {
    enum { kBus = 256, kSystemd, kState, kShim };
    static const option longOpts[] = {
        {"config", required_argument, nullptr, 'c'},  {"bus-address", required_argument, nullptr, kBus},
        {"systemd-address", required_argument, nullptr, kSystemd},
        {"state-dir", required_argument, nullptr, kState}, {"shim", required_argument, nullptr, kShim},
        {"verbose", no_argument, nullptr, 'v'},       {"help", no_argument, nullptr, 'h'},
        {nullptr, 0, nullptr, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "c:vh", longOpts, nullptr)) != -1) {
        switch (c) {
            case 'c': o.config = optarg; break;
            case kBus: o.busAddress = optarg; break;
            case kSystemd: o.systemdAddress = optarg; break;
            case kState: o.stateDir = optarg; break;
            case kShim: o.shim = optarg; break;
            case 'v': o.verbose = true; break;
            case 'h': usage(stdout); std::exit(0);
            default: usage(stderr); return false;
        }
    }
    return true;
}

manager::NodeFacts probeNode(scope::SdbusSystemdClient& systemd, std::set<unsigned>& usableCpus) {
    manager::NodeFacts facts;
    facts.version = TASKSCOPE_VERSION;
    std::string systemdVersion;
    if (auto v = systemd.version()) systemdVersion = *v;
    auto probed = fingerprint::probe(fingerprint::Roots{});
    if (!probed) {
        spdlog::warn("Failed to fingerprint the node: {}, ignoring", probed.error().message);
        return facts;
    }
    usableCpus = probed->usableCpus;
    const auto j = fingerprint::toJson(*probed, systemdVersion);
    facts.fingerprintJson = j.dump();
    facts.cgroupVersion = j.value("unique.cgroups.version", "");
    return facts;
}

// The reconciler's edge: one journal line and one signal per dangling scope.
void reportDanglingScopes(const manager::ReconcileOutcome& outcome, manager::ManagerObject& object) {
    for (const auto& s : outcome.stopped) {
        if (outcome.dryRun)
            spdlog::warn("Found dangling scope {} (active since {}, no task owns it); dry run: left running", s.unit,
                         task::formatTime(s.activeSinceUs));
        else
            spdlog::warn("Stopped dangling scope {} (active since {}, no task owns it)", s.unit,
                         task::formatTime(s.activeSinceUs));
        object.danglingScopeStopped(s.unit, outcome.dryRun);
    }
    for (const auto& f : outcome.failed)
        spdlog::error("Failed to stop dangling scope {}: {}", f.unit, f.error.message);
}

int run(const Options& opts) {
    manager::Config defaults;
    defaults.shimPath = TASKSCOPE_SHIM_DEFAULT;
    auto config = manager::loadConfig(opts.config, defaults);
    if (!config) {
        spdlog::error("Failed to load configuration: {}", config.error().message);
        return 1;
    }
    if (!opts.stateDir.empty()) config->stateDir = opts.stateDir;
    if (!opts.shim.empty()) config->shimPath = opts.shim;
    // Tests only (tasks/config.hpp): from the environment of a test's
    // drop-in, never from a config file an operator edits.
    if (const char* f = std::getenv("TASKSCOPE_FAULT_POINTS"); f && std::string(f) == "1") {
        config->faultPoints = true;
        spdlog::warn("Test fault points are on (TASKSCOPE_FAULT_POINTS=1): starts of allocations named "
                     "fault-hold-<step>-... are held until they fail");
    }

    common::EventLoop loop;
    // SIGTERM (systemctl stop or restart) lets the starts under way finish
    // and refuses new ones: their callers are answered, not cut off.
    std::function<bool()> drainOnStop;
    common::quitOnTermination(loop, [&drainOnStop] { return drainOnStop && drainOnStop(); });

    // systemd gets a connection of its own (it may be another bus, in
    // tests). Every call that waits for a job is asynchronous: its answer
    // and its JobRemoved arrive through this loop, which meanwhile serves
    // the API.
    auto systemdBus = common::connectBus(opts.systemdAddress);
    auto serviceBus = common::connectBus(opts.busAddress);
    // Not subscribed: systemd sends a job's JobRemoved to the client that
    // asked for the job anyway (the job tracks its requester), while a
    // subscriber makes PID 1 emit every unit's and job's signals, each
    // routed by dbus-daemon, on a node busy starting tasks.
    scope::SdbusSystemdClient systemd(*systemdBus, std::chrono::milliseconds(config->jobTimeoutMs), &loop);

    // A systemd that cannot drive this node stops the manager here, with
    // what is missing named, before any task is recovered or started.
    {
        const auto version = systemd.version();
        const bool unified = scope::CgroupHost::detect().unified();
        if (auto r = manager::checkSystemdSupport(version ? *version : std::string(), unified); !r) {
            spdlog::critical("Cannot run on this node: {}", r.error().message);
            // EX_CONFIG: the unit does not restart it (RestartPreventExitStatus),
            // since nothing but the node's boot changes the answer.
            return EX_CONFIG;
        }
        systemd.usePidfds(version && manager::systemdTakesPidfds(*version));
        if (version)
            spdlog::info("systemd {} on cgroup {}; scopes take their processes as {}", *version, unified ? "v2" : "v1",
                         systemd.usesPidfds() ? "pidfds" : "PIDs");
    }

    // The node's own share, kept from tasks (node_slice.hpp), before any
    // task starts or is recovered. A failure is the journal's: tasks still
    // run, in a slice without those limits.
    if (auto props = manager::nodeSliceProperties(config->nodeSlice, manager::readNodeCapacity()); !props.empty()) {
        if (auto r = systemd.setUnitProperties(config->slice, props); r)
            spdlog::info("{}: {} (the node's share kept from tasks)", config->slice, manager::describe(props));
        else
            spdlog::error("Failed to set {} on {}: {}; tasks run without them", manager::describe(props),
                          config->slice, r.error().message);
    }

    // The node's default copy to the journal, with no journald to take it:
    // the daemon runs, and says once here what each such start will say.
    if (config->logJournal && !config->streamer)
        spdlog::error("log_journal is on, but this manager hands task output to no streamer (\"streamer\": false): "
                      "nothing is copied to the journal, and tasks asking for it (log_journal true) will be refused");
    if (config->logJournal && config->streamer)
        if (auto r = manager::journalSocketReady(config->journalSocket); !r)
            spdlog::error("{}; tasks asking for the journal (log_journal, this node's default) will be refused",
                          r.error().message);

    std::set<unsigned> usableCpus;
    auto facts = probeNode(systemd, usableCpus);
    manager::JournalNotes notes;  // outlives the registry, which reports to it
    manager::TaskRegistry tasks(*config, systemd, systemd, loop, manager::kTaskPathPrefix, usableCpus);
    tasks.setNotes(notes);
    std::optional<manager::ShimHome> shimHome;
    if (!config->shimUnit.empty()) {
        shimHome.emplace(systemd, systemd, loop, config->shimPath, config->shimUnit);
        shimHome->setNotes({[](const std::string& unit, pid_t placeholder) {
                                spdlog::info("Created {} for the task shims (placeholder pid {})", unit, placeholder);
                            },
                            [](const common::Error& why) {
                                spdlog::error("Shims stay in the manager's cgroup, where a kill of its unit takes "
                                              "them: {}",
                                              why.message);
                            }});
        if (auto r = shimHome->ensure(); !r)
            spdlog::error("Failed to make {} for the shims: {}; they stay in the manager's cgroup for now",
                          config->shimUnit, r.error().message);
        tasks.setShimHome(&*shimHome);
    }
    // Plugin tasks: the registry probes plugins on a thread of its own (gRPC
    // calls block) and hears of tasks with the bus.
    plugins::ProbeWorker probeWorker(loop);
    plugins::PluginRegistry registry(
        config->stateDir + "/plugins", plugins::kRegistryPath, loop, probeWorker,
        [](const std::string& socket, bool withInfo) {
            return plugins::queryIdentity(socket, withInfo, std::chrono::seconds(5));
        },
        [&tasks] { return tasks.list(); });
    tasks.setStartHook([&registry](const std::string& allocId, const std::string& task, spec::TaskSpec& spec) {
        return registry.prepareStart(allocId, task, spec);
    });
    if (auto r = tasks.recover(); !r) {
        spdlog::error("Failed to recover tasks: {}", r.error().message);
        return 1;
    }
    // Networks before the bus name: a task that joins one after a restart
    // finds it checked (or made again).
    network::NetworkManager networks(config->network, config->stateDir, loop);
    networks.setLog([](const std::string& m) { spdlog::warn("{}", m); });
    networks.setInUse([&tasks](const std::string& alloc) { return tasks.allocHasLiveTasks(alloc); });
    networks.recover();
    tasks.setNetworks([&networks](const std::string& alloc) { return networks.netnsPath(alloc); });
    manager::ManagerObject object(*serviceBus, tasks, networks, std::move(facts));
    plugins::RegistryObject registryObject(*serviceBus, registry);
    registry.attach(registryObject);
    registry.recover();
    manager::TaskEventsFanout taskEvents({&object, &registry});
    tasks.attach(taskEvents);
    networks.attach(object);
    manager::ScopeReconciler reconciler(config->danglingScopes, systemd, config->slice,
                                        [&tasks](const std::string& unit) { return tasks.ownsUnit(unit); });
    reconciler.watchSlices(tasks.sliceLayout(), [&tasks](const std::string& slice) { return tasks.ownsSlice(slice); });
    reconciler.start(
        loop, [&object](const manager::ReconcileOutcome& o) { reportDanglingScopes(o, object); },
        [](const common::Error& e) { spdlog::warn("Dangling-scope pass failed: {}, retrying next period", e.message); });
    // Bounded well inside systemd's 90 s stop timeout (DefaultTimeoutStopSec),
    // after which it would SIGKILL us anyway.
    drainOnStop = [&tasks, &loop] {
        tasks.drain(std::chrono::seconds(60), [&loop] { loop.quit(0); });
        return true;
    };
    loop.addBus(*systemdBus);
    loop.addBus(*serviceBus);
    // Taking the name last: callers activated by it find every object.
    serviceBus->requestName(sdbus_compat::ServiceName{kBusName});
    spdlog::info("taskscope-manager {} ready: {} tasks, slice {}", TASKSCOPE_VERSION, tasks.list().size(),
                 config->slice);
    if (config->danglingScopes.enabled)
        spdlog::info("Dangling scopes: first pass in {} ms, then every {} ms, grace {} ms{}",
                     manager::firstPassDelay(config->danglingScopes).count(), config->danglingScopes.period.count(),
                     config->danglingScopes.creationGrace.count(), config->danglingScopes.dryRun ? ", dry run" : "");
    return loop.run();
}

}  // namespace

int main(int argc, char** argv) {
    Options opts;
    if (!parseOptions(argc, argv, opts)) return 2;
    common::setupLogging("taskscope-manager", opts.verbose);
    try {
        return run(opts);
    } catch (const sdbus::Error& e) {
        // No catch-and-continue: systemd restarts us, recovery picks up.
        spdlog::critical("D-Bus failure: {}: {}", e.getName(), e.getMessage());
        return 1;
    }
}
