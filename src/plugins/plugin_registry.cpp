#include "plugins/plugin_registry.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <vector>

#include "common/clock.hpp"
#include "common/error_names.hpp"
#include "common/files.hpp"
#include "common/safe_path.hpp"
#include "plugins/registration.hpp"
#include "scope/unit_name.hpp"

namespace taskscope::plugins {

using common::makeError;
using common::Result;
using spec::pluginHostDir;
using spec::pluginId;
using task::TaskRecord;
using task::TaskState;
using namespace std::chrono_literals;

namespace {

// Until the socket answers a plugin is looked at often; after that at its
// health interval.
constexpr auto kSocketPoll = 250ms;

bool serving(const TaskRecord& t) { return t.state == TaskState::Running || t.state == TaskState::Stopping; }

// The socket itself, never what a link in its place points to: the plugin
// task can write its socket directory (issue 32).
bool isSocket(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// The sockets a plugin left in its directory, unlinked there (never through
// a link): its task ended while the manager was away.
void removeSockets(const std::string& dir) {
    auto fd = common::openNoSymlinks(dir, O_RDONLY | O_DIRECTORY);
    if (!fd) return;
    std::unique_ptr<DIR, int (*)(DIR*)> d(::fdopendir(::dup(fd->get())), &::closedir);
    if (!d) return;
    std::vector<std::string> sockets;
    while (auto* e = ::readdir(d.get())) {
        struct stat st {};
        if (::fstatat(fd->get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode))
            sockets.emplace_back(e->d_name);
    }
    for (const auto& name : sockets) ::unlinkat(fd->get(), name.c_str(), 0);
}

}  // namespace

std::string endReason(const TaskRecord& t) {
    if (t.state == TaskState::Lost) return "its task was lost: " + t.lostReason;
    if (t.finished()) {
        if (t.exit.signal) return "its task was killed by signal " + std::to_string(t.exit.signal);
        return "its task exited with code " + std::to_string(t.exit.exitCode);
    }
    return "its task was forgotten";
}

PluginRegistry::PluginRegistry(std::string root, std::string objectPrefix, common::EventLoop& loop,
                               ProbeWorker& worker, Prober prober, TaskList tasks)
    : root_(std::move(root)),
      objectPrefix_(std::move(objectPrefix)),
      loop_(loop),
      worker_(worker),
      prober_(std::move(prober)),
      tasks_(std::move(tasks)) {}

PluginRegistry::~PluginRegistry() {
    for (auto& [key, p] : plugins_)
        if (p->timer) loop_.cancelTimer(p->timer);
}

std::string PluginRegistry::recordPath(const PluginSpec& spec) const { return pluginHostDir(root_, spec) + ".json"; }

Result<void> PluginRegistry::prepareStart(const std::string& allocId, const std::string& task,
                                          spec::TaskSpec& taskSpec) {
    if (!taskSpec.plugin) return {};
    const auto& plugin = *taskSpec.plugin;
    for (const auto* t : tasks_()) {
        if (t->finished() || (t->allocId == allocId && t->name == task)) continue;
        const auto& other = t->spec.plugin;
        if (other && pluginId(*other) == pluginId(plugin))
            return makeError(common::errors::kPluginNameInUse, "plugin " + pluginId(plugin) + " is already served by task " +
                                                    t->allocId + "/" + t->name);
    }
    const auto dir = pluginHostDir(root_, plugin);
    const auto socket = dir + "/" + plugin.socket;
    if (socket.size() > spec::kMaxSocketPath)
        return makeError(common::errors::kInvalidSpec, "plugin socket path " + socket + " is longer than a unix socket address holds (" +
                                            std::to_string(spec::kMaxSocketPath) + ")");
    if (auto r = common::makePrivateDir(dir); !r) return r.error().context("create plugin directory");
    // A socket left by the plugin's previous task would answer nothing and
    // look like this one's.
    ::unlink(socket.c_str());
    // Nomad's convention: the plugin listens where CSI_ENDPOINT says. A
    // task with the host's filesystem sees the host directory itself; an
    // isolated one gets it at mount_dir. The socket is a file in the shared
    // directory, so the host sees it whatever the propagation; bidirectional
    // also carries mounts a storage plugin makes below it back to the host.
    if (taskSpec.isolation.filesystem) {
        taskSpec.isolation.volumes.push_back(
            spec::Volume{dir, plugin.mountDir, false, spec::Propagation::Bidirectional});
        taskSpec.env["CSI_ENDPOINT"] = "unix://" + plugin.mountDir + "/" + plugin.socket;
    } else {
        taskSpec.env["CSI_ENDPOINT"] = "unix://" + socket;
    }
    return {};
}

void PluginRegistry::recover() {
    std::map<std::string, const TaskRecord*> byPlugin;
    for (const auto* t : tasks_())
        if (t->spec.plugin && !t->finished()) byPlugin[pluginId(*t->spec.plugin)] = t;

    std::error_code ec;
    for (const auto& typeDir : std::filesystem::directory_iterator(root_, ec)) {
        if (!typeDir.is_directory()) continue;
        for (const auto& f : std::filesystem::directory_iterator(typeDir.path(), ec)) {
            if (f.path().extension() != ".json") continue;
            auto text = common::readFile(f.path());
            auto reg = text ? parseRegistration(*text) : Result<Registration>(text.error());
            if (!reg) {
                spdlog::warn("Unreadable plugin registration {}, removing it: {}", f.path().string(),
                             reg.error().message);
                std::filesystem::remove(f.path(), ec);
                continue;
            }
            const auto& r = *reg;
            const auto id = r.type + "/" + r.name;
            const auto it = byPlugin.find(id);
            const bool sameTask =
                it != byPlugin.end() && it->second->allocId == r.allocId && it->second->name == r.task;
            if (!sameTask) {
                spdlog::info("Deregistered plugin {}: its task ended while the manager was away", id);
                PluginEntry gone;
                gone.spec.type = r.type;
                gone.spec.name = r.name;
                gone.allocId = r.allocId;
                gone.task = r.task;
                gone.provider = r.provider;
                gone.version = r.version;
                gone.objectPath = scope::taskObjectPath(objectPrefix_, gone.spec.type + "_" + gone.spec.name);
                if (events_) events_->pluginDeregistered(gone, "its task ended while the manager was away");
                std::filesystem::remove(f.path(), ec);
                // Its socket goes with its registration, as when it ends
                // while the manager runs; unless another task serves the
                // plugin now.
                // (The directory beside the record, named as the record is.)
                if (it == byPlugin.end()) removeSockets((f.path().parent_path() / f.path().stem()).string());
                continue;
            }
            const auto& t = *it->second;
            watch(t, *t.spec.plugin);
            auto& p = *plugins_.at(Key{t.allocId, t.name});
            p.provider = r.provider;
            p.version = r.version;
            p.capabilities = r.capabilities;
            p.message = "registered before the manager restarted; being probed";
            p.healthy = r.healthy;
            registerPlugin(p, false);
        }
    }
    // Plugin tasks that run but were never registered (the manager went
    // away before their socket answered) are watched as new ones.
    for (const auto& [id, t] : byPlugin)
        if (serving(*t) && !plugins_.count(Key{t->allocId, t->name})) onTask(*t);
}

std::vector<const PluginEntry*> PluginRegistry::list() const {
    std::vector<const PluginEntry*> out;
    for (const auto& [k, p] : plugins_)
        if (p->registered) out.push_back(p.get());
    return out;
}

void PluginRegistry::onTask(const TaskRecord& task) {
    const Key key{task.allocId, task.name};
    const auto it = plugins_.find(key);
    if (it == plugins_.end()) {
        if (!serving(task)) return;
        if (task.spec.plugin) watch(task, *task.spec.plugin);
        return;
    }
    if (task.finished()) deregister(key, endReason(task));
}

void PluginRegistry::taskRemoved(const TaskRecord& task) {
    const Key key{task.allocId, task.name};
    if (plugins_.count(key)) deregister(key, endReason(task));
}

void PluginRegistry::watch(const TaskRecord& task, const PluginSpec& spec) {
    const Key key{task.allocId, task.name};
    auto p = std::make_unique<PluginEntry>();
    p->spec = spec;
    p->allocId = task.allocId;
    p->task = task.name;
    p->socketPath = pluginHostDir(root_, spec) + "/" + spec.socket;
    p->objectPath = scope::taskObjectPath(objectPrefix_, spec.type + "_" + spec.name);
    p->watchedSince = std::chrono::steady_clock::now();
    p->generation = ++generations_;
    p->message = "waiting for the plugin's socket";
    plugins_[key] = std::move(p);
    schedule(key, 0ms);
}

void PluginRegistry::schedule(const Key& key, std::chrono::milliseconds after) {
    auto& p = *plugins_.at(key);
    if (p.timer) loop_.cancelTimer(p.timer);
    p.timer = loop_.addTimer(common::EventLoop::Clock::now() + after, [this, key] {
        plugins_.at(key)->timer = 0;
        check(key);
    });
}

void PluginRegistry::check(const Key& key) {
    auto& p = *plugins_.at(key);
    if (p.probing) return;
    const auto waited = std::chrono::steady_clock::now() - p.watchedSince;
    const auto interval = std::chrono::milliseconds(p.spec.healthIntervalMs);
    if (!isSocket(p.socketPath)) {
        // Never seen: the reason given at registration ("did not appear")
        // stays true; keep looking at the health interval.
        if (p.registered && !p.socketSeen) return schedule(key, interval);
        if (p.registered) {
            p.lastCheckUs = common::wallClockUs();
            const bool was = p.healthy;
            p.healthy = false;
            p.message = "the plugin's socket " + p.socketPath + " is gone";
            if (events_) events_->pluginChanged(p, was);
            return schedule(key, interval);
        }
        if (waited < std::chrono::milliseconds(p.spec.socketTimeoutMs)) return schedule(key, kSocketPoll);
        // Never a hung start: the plugin is known, and unhealthy, with the reason.
        p.healthy = false;
        p.lastCheckUs = common::wallClockUs();
        p.message = "the plugin's socket " + p.socketPath + " did not appear within " +
                    std::to_string(p.spec.socketTimeoutMs) + " ms";
        registerPlugin(p, true);
        return schedule(key, interval);
    }
    p.socketSeen = true;
    p.probing = true;
    const bool withInfo = p.infoWanted;
    const auto socket = p.socketPath;
    const auto generation = p.generation;
    worker_.submit([this, key, socket, withInfo, generation, prober = prober_]() -> std::function<void()> {
        auto answer = std::make_shared<Result<IdentityAnswer>>(prober(socket, withInfo));
        return [this, key, generation, answer] { answered(key, generation, std::move(*answer)); };
    });
}

void PluginRegistry::answered(const Key& key, uint64_t generation, Result<IdentityAnswer> answer) {
    const auto it = plugins_.find(key);
    if (it == plugins_.end() || it->second->generation != generation) return;  // deregistered meanwhile
    auto& p = *it->second;
    p.probing = false;
    const auto interval = std::chrono::milliseconds(p.spec.healthIntervalMs);
    const auto waited = std::chrono::steady_clock::now() - p.watchedSince;
    if (!p.registered && !answer && waited < std::chrono::milliseconds(p.spec.socketTimeoutMs))
        return schedule(key, kSocketPoll);  // the socket is there, its server not yet

    const bool was = p.healthy;
    const auto before = p.message;
    p.lastCheckUs = common::wallClockUs();
    if (answer) {
        if (answer->haveInfo) {
            p.infoWanted = false;
            p.provider = answer->provider;
            p.version = answer->version;
            p.capabilities = answer->capabilities;
        }
        p.healthy = answer->ready;
        p.message = answer->ready ? "ready" : answer->message;
    } else {
        p.healthy = false;
        p.message = answer.error().message;
    }
    if (!p.registered) {
        registerPlugin(p, true);
    } else {
        // The record keeps the last health too: a restart that took an older
        // verdict from it would announce a change that never happened.
        if ((answer && answer->haveInfo) || was != p.healthy)
            if (auto r = save(p); !r) spdlog::warn("Failed to save plugin {}: {}", pluginId(p.spec), r.error().message);
        if ((was != p.healthy || before != p.message) && events_) events_->pluginChanged(p, was != p.healthy);
        if (was != p.healthy)
            spdlog::info("Plugin {} is {}: {}", pluginId(p.spec), p.healthy ? "healthy" : "unhealthy", p.message);
    }
    schedule(key, interval);
}

void PluginRegistry::registerPlugin(PluginEntry& p, bool announce) {
    p.registered = true;
    if (auto r = save(p); !r)
        spdlog::warn("Failed to save plugin {}: {}; a restart will register it again", pluginId(p.spec),
                     r.error().message);
    if (announce)
        spdlog::info("Registered plugin {} (provider '{}', version '{}') of task {}/{}: {}", pluginId(p.spec),
                     p.provider, p.version, p.allocId, p.task, p.healthy ? "healthy" : p.message);
    if (events_) events_->pluginRegistered(p, announce);
}

void PluginRegistry::deregister(const Key& key, const std::string& reason) {
    auto node = plugins_.extract(key);
    auto& p = *node.mapped();
    if (p.timer) loop_.cancelTimer(p.timer);
    std::error_code ec;
    std::filesystem::remove(recordPath(p.spec), ec);
    ::unlink(p.socketPath.c_str());
    if (!p.registered) return;
    spdlog::info("Deregistered plugin {}: {}", pluginId(p.spec), reason);
    if (events_) events_->pluginDeregistered(p, reason);
}

Result<void> PluginRegistry::save(const PluginEntry& p) const {
    return common::writeFileAtomic(recordPath(p.spec),
                                   registrationText({p.spec.type, p.spec.name, p.allocId, p.task, p.provider, p.version,
                                                     p.capabilities, p.healthy}));
}

}  // namespace taskscope::plugins
