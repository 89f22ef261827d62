#pragma once
// The registry of plugin tasks: a task whose spec declares a plugin gets a
// host directory for its socket; once the task runs, the registry waits for
// the socket, asks the plugin who it is (CSI Identity), registers it, and
// probes it at the spec's interval. Health changes are reported; the task's
// own state is never touched. The plugin leaves the registry when its task
// ends (Nomad would leave it registered and unhealthy forever).
//
// Lives on the manager's event loop; gRPC calls run on the ProbeWorker.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "common/result.hpp"
#include "plugins/identity_client.hpp"
#include "plugins/probe_worker.hpp"
#include "spec/task_spec.hpp"
#include "task/task_events.hpp"

namespace taskscope::plugins {

using spec::PluginSpec;

/// What the registry knows of one plugin.
struct PluginEntry {
    PluginSpec spec;
    std::string allocId;
    std::string task;
    std::string socketPath;  ///< on the host
    std::string objectPath;
    std::string provider;
    std::string version;
    std::vector<std::string> capabilities;
    bool registered = false;
    bool healthy = false;
    uint64_t lastCheckUs = 0;  ///< wall clock, microseconds
    std::string message;
    // Not published:
    std::chrono::steady_clock::time_point watchedSince;
    uint64_t timer = 0;
    bool probing = false;
    bool socketSeen = false;
    bool infoWanted = true;  ///< the next probe also asks GetPluginInfo/Capabilities (first, and after a restart)  ///< the socket existed once ("gone" differs from "never came")
    uint64_t generation = 0;  ///< a probe's answer for an older watch is dropped
};

/// What the bus hears.
class PluginEvents {
public:
    virtual ~PluginEvents() = default;
    /// `announce`: false when a restart re-publishes a plugin registered before.
    virtual void pluginRegistered(const PluginEntry& plugin, bool announce) = 0;
    virtual void pluginChanged(const PluginEntry& plugin, bool healthChanged) = 0;
    virtual void pluginDeregistered(const PluginEntry& plugin, const std::string& reason) = 0;
};

class PluginRegistry final : public task::TaskEvents {
public:
    using Prober = std::function<common::Result<IdentityAnswer>(const std::string& socketPath, bool withInfo)>;
    using TaskList = std::function<std::vector<const task::TaskRecord*>()>;

    /// `root`: the host directories (<root>/<type>/<name>) and the
    /// registrations that outlive a restart (<root>/<type>/<name>.json).
    PluginRegistry(std::string root, std::string objectPrefix, common::EventLoop& loop, ProbeWorker& worker,
                   Prober prober, TaskList tasks);
    ~PluginRegistry();
    PluginRegistry(const PluginRegistry&) = delete;
    PluginRegistry& operator=(const PluginRegistry&) = delete;

    /// A start of a plugin task: PluginNameInUse when another live task
    /// serves the plugin; makes the host directory and tells the task where
    /// to listen (CSI_ENDPOINT, as Nomad sets it).
    /// An isolated task sees the directory at the spec's mount_dir, through
    /// a bidirectional volume added to its spec.
    common::Result<void> prepareStart(const std::string& allocId, const std::string& task, spec::TaskSpec& spec);

    /// After the task manager recovered: plugins registered before a restart
    /// are published again (not announced twice) and probed at once; those
    /// whose task ended meanwhile are deregistered.
    void recover();
    void attach(PluginEvents& events) { events_ = &events; }

    std::vector<const PluginEntry*> list() const;

    // task::TaskEvents
    void taskAdded(const task::TaskRecord& task) override { onTask(task); }
    void taskChanged(const task::TaskRecord& task) override { onTask(task); }
    void taskExited(const task::TaskRecord& task) override { onTask(task); }
    void taskRemoved(const task::TaskRecord& task) override;
    /// A plugin's start that failed never registered it: nothing to do.
    void taskStartFailed(const task::TaskRecord&, const std::string&) override {}

private:
    using Key = std::pair<std::string, std::string>;  // (alloc, task)

    void onTask(const task::TaskRecord& task);
    void watch(const task::TaskRecord& task, const PluginSpec& spec);
    void schedule(const Key& key, std::chrono::milliseconds after);
    void check(const Key& key);
    void answered(const Key& key, uint64_t generation, common::Result<IdentityAnswer> answer);
    void registerPlugin(PluginEntry& p, bool announce);
    void deregister(const Key& key, const std::string& reason);
    common::Result<void> save(const PluginEntry& p) const;
    std::string recordPath(const PluginSpec& spec) const;

    std::string root_;
    std::string objectPrefix_;
    common::EventLoop& loop_;
    ProbeWorker& worker_;
    Prober prober_;
    TaskList tasks_;
    PluginEvents* events_ = nullptr;
    std::map<Key, std::unique_ptr<PluginEntry>> plugins_;
    uint64_t generations_ = 0;
};

/// Why a plugin's task is no longer there to serve it.
std::string endReason(const task::TaskRecord& task);

}  // namespace taskscope::plugins
