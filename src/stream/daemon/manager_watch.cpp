#include "stream/daemon/manager_watch.hpp"

#include <spdlog/spdlog.h>

#include "common/sdbus_compat.hpp"
#include "stream/daemon/manager_address.hpp"
#include "wire/task_state.hpp"

namespace taskscope::stream::daemon {

namespace {

constexpr const char* kBus = "org.freedesktop.DBus";
constexpr const char* kBusPath = "/org/freedesktop/DBus";
// Only the manager's name: every other service's comings and goings would
// wake us for nothing.
constexpr const char* kOwnerMatch =
    "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
    "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.taskscope.Manager1'";
constexpr auto kCallTimeout = std::chrono::seconds(30);
constexpr auto kRetryAfter = std::chrono::seconds(1);
// GetTask calls in flight for allocation slices: well below the system
// bus's 128 pending replies per connection (dbus-daemon's system.conf).
constexpr unsigned kSliceLookups = 8;

// A task with processes, whose cgroup is worth reading.
bool active(const std::string& state) {
    const auto s = wire::parseTaskState(state);
    return s && !wire::isFinished(*s);
}

std::string stringProperty(const std::map<std::string, sdbus::Variant>& props, const char* name) {
    const auto it = props.find(name);
    if (it == props.end() || !it->second.containsValueOfType<std::string>()) return {};
    return it->second.get<std::string>();
}

}  // namespace

ManagerWatch::ManagerWatch(sdbus::IConnection& connection, ManagerClient& manager, common::EventLoop& loop,
                           stats::StatsSampler& sampler)
    : connection_(connection),
      managerClient_(manager),
      loop_(loop),
      sampler_(sampler),
      dbus_(sdbus::createProxy(connection, sdbus_compat::ServiceName{kBus}, sdbus::ObjectPath{kBusPath})) {}

ManagerWatch::~ManagerWatch() {
    if (retryTimer_) loop_.cancelTimer(retryTimer_);
}

void ManagerWatch::start(TaskRoster* roster) {
    roster_ = roster;
    // Subscribed before asking, so that nothing happens unseen in between.
    ownerMatch_ = sdbus_compat::addMatch(connection_, kOwnerMatch, [this](sdbus::Message& m) {
        std::string name, oldOwner, newOwner;
        m >> name >> oldOwner >> newOwner;
        onOwnerChanged(newOwner);
    });
    managerClient_.listen(*this);
    sdbus_compat::finishRegistration(*dbus_);
    // Asking the manager itself would start it through bus activation.
    dbus_->callMethodAsync("GetNameOwner")
        .onInterface(kBus)
        .withTimeout(kCallTimeout)
        .withArguments(std::string(kManager))
        .uponReplyInvoke([this](sdbus_compat::ReplyError error, const std::string& owner) {
            if (!error && !owner.empty()) onOwnerChanged(owner);
        });
}

void ManagerWatch::onOwnerChanged(const std::string& newOwner) {
    managerUp_ = !newOwner.empty();
    if (managerUp_) {
        spdlog::debug("taskscope-manager is on the bus as {}; listing its tasks", newOwner);
        fetchAll();
        return;
    }
    spdlog::info("taskscope-manager left the bus; sampling the tasks known until it returns");
    ++generation_;  // a reply still on its way is from the instance that left
    if (retryTimer_) loop_.cancelTimer(retryTimer_);
    retryTimer_ = 0;
}

void ManagerWatch::fetchAll() {
    const auto generation = ++generation_;
    managerClient_.listTasks([this, generation](common::Result<TaskObjects> tasks) { onTasks(generation, tasks); });
}

void ManagerWatch::onTasks(uint64_t generation, const common::Result<TaskObjects>& tasks) {
    if (generation != generation_) return;
    if (!tasks) {
        spdlog::warn("Failed to {}; retrying in {} s", tasks.error().message, kRetryAfter.count());
        scheduleRetry();
        return;
    }
    std::set<stats::TaskKey> running;
    std::set<std::string> units;
    objects_.clear();
    for (const auto& [path, task] : *tasks) {
        const auto unit = stringProperty(task, "Unit");
        objects_[path] = Known{stats::TaskKey{stringProperty(task, "AllocId"), stringProperty(task, "Name")}, unit};
        units.insert(unit);
        if (!active(stringProperty(task, "State"))) continue;
        running.insert(stats::TaskKey{stringProperty(task, "AllocId"), stringProperty(task, "Name")});
        learn(task);
    }
    // Tasks that ended while the manager was away, and intervals kept for them.
    sampler_.retainOnly(running);
    spdlog::debug("taskscope-manager runs {} tasks ({} known); {} sampled", running.size(), units.size(),
                  sampler_.taskCount());
    if (roster_) roster_->managerTasks(units);
}

void ManagerWatch::taskAdded(const sdbus::ObjectPath& path, const TaskProperties& task) {
    objects_[path] = Known{stats::TaskKey{stringProperty(task, "AllocId"), stringProperty(task, "Name")},
                           stringProperty(task, "Unit")};
    learn(task);
}

void ManagerWatch::taskRemoved(const sdbus::ObjectPath& path) {
    const auto it = objects_.find(path);
    // Unknown: removed before our listing answered, which will not name it.
    if (it == objects_.end()) return;
    const auto known = std::move(it->second);
    objects_.erase(it);
    sampler_.removeTask(known.key);
    if (roster_ && !known.unit.empty()) roster_->taskForgotten(known.unit);
}

bool ManagerWatch::learn(const TaskProperties& task, const std::string* allocSlice) {
    const stats::TaskKey key{stringProperty(task, "AllocId"), stringProperty(task, "Name")};
    if (key.allocId.empty() || !active(stringProperty(task, "State"))) return false;
    const auto cgroup = scope::CgroupPath::parse(stringProperty(task, "ControlGroup"));
    if (!cgroup) {
        spdlog::warn("Cannot sample task {}: {}, ignoring", key.str(), cgroup.error().message);
        return false;
    }
    sampler_.addTask(key, *cgroup);
    if (allocSlice && !sampler_.allocSliceKnown(key)) placeInSlice(key, *allocSlice);
    if (!sampler_.allocSliceKnown(key)) lookUpSlices(key.allocId);
    return true;
}

void ManagerWatch::placeInSlice(const stats::TaskKey& key, const std::string& allocSlice) {
    if (auto r = sampler_.setAllocSlice(key, allocSlice); !r)
        spdlog::warn("Cannot sample the allocation slice of task {}: {}; counting the task on its own", key.str(),
                     r.error().message);
}

void ManagerWatch::lookUpSlices(const std::string& allocId) {
    if (!sliceQueued_.insert(allocId).second) return;
    sliceQueue_.push_back(allocId);
    pumpSliceLookups();
}

void ManagerWatch::pumpSliceLookups() {
    while (sliceLookups_ < kSliceLookups && !sliceQueue_.empty()) {
        const auto allocId = std::move(sliceQueue_.front());
        sliceQueue_.pop_front();
        // One task at a time per allocation: its answer usually places its siblings too.
        const auto key = sampler_.sliceUnknown(allocId);
        if (!key) {
            sliceQueued_.erase(allocId);
            continue;
        }
        ++sliceLookups_;
        auto asked = sampler_.cgroupOf(*key)->str();
        managerClient_.getTask(key->allocId, key->task,
                               [this, key = *key, asked = std::move(asked)](common::Result<wire::TaskInfo> task) {
                                   --sliceLookups_;
                                   sliceQueued_.erase(key.allocId);
                                   if (task) answered(key, asked, *task);
                                   // Else the task is gone, or the manager went away and its return
                                   // lists everything anew.
                                   pumpSliceLookups();
                               });
    }
}

void ManagerWatch::answered(const stats::TaskKey& key, const std::string& asked, const wire::TaskInfo& task) {
    const auto* now = sampler_.cgroupOf(key);
    if (!now) return;  // gone meanwhile
    if (task.cgroup == now->str()) {
        placeInSlice(key, task.allocSlice);
    } else if (now->str() == asked) {
        // The manager reports another cgroup than its task object did: its
        // next listing settles it; asking again now could loop.
        return;
    }
    // Siblings in another slice, flat ones, or this task in a cgroup learned meanwhile.
    if (sampler_.sliceUnknown(key.allocId)) lookUpSlices(key.allocId);
}

void ManagerWatch::taskExited(const std::string& allocId, const std::string& task) {
    sampler_.removeTask(stats::TaskKey{allocId, task});
}

void ManagerWatch::taskStateChanged(const std::string& allocId, const std::string& task, const std::string& state) {
    const stats::TaskKey key{allocId, task};
    if (!active(state)) return sampler_.removeTask(key);
    if (!sampler_.knows(key)) fetchOne(key);
}

void ManagerWatch::fetchOne(const stats::TaskKey& key) {
    managerClient_.getTask(key.allocId, key.task, [this, key](common::Result<wire::TaskInfo> task) {
        if (!task) return;  // gone again, or the manager went away: its return lists everything anew
        learn(TaskProperties{{"AllocId", sdbus::Variant(key.allocId)},
                             {"Name", sdbus::Variant(key.task)},
                             {"State", sdbus::Variant(task->state)},
                             {"ControlGroup", sdbus::Variant(task->cgroup)}},
              &task->allocSlice);
    });
}

void ManagerWatch::scheduleRetry() {
    if (retryTimer_ || !managerUp_) return;
    retryTimer_ = loop_.addTimer(common::EventLoop::Clock::now() + kRetryAfter, [this] {
        retryTimer_ = 0;
        if (managerUp_) fetchAll();
    });
}

}  // namespace taskscope::stream::daemon
