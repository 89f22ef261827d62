// The systemd client over sdbus-c++ (sdbus_systemd_client.hpp).
#include "scope/sdbus_systemd_client.hpp"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <spdlog/spdlog.h>

#include "common/error_names.hpp"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // the same number on every architecture (Linux 5.3)
#endif

namespace taskscope::scope {

namespace {

constexpr const char* kService = client::kSystemdName;
constexpr const char* kUnitInterface = "org.freedesktop.systemd1.Unit";
constexpr const char* kManagerInterface = "org.freedesktop.systemd1.Manager";

// Runs one call to systemd, turning its D-Bus error into ours.
template <class F>
common::Result<void> attempt(const std::string& what, F&& call) {
    try {
        call();
        return {};
    } catch (const sdbus::Error& e) {
        return systemdError(e, what);
    }
}

}  // namespace

common::Error systemdError(const sdbus::Error& e, const std::string& what) {
    const auto& name = e.getName();
    // systemd's error names, and what each is called here; anything else
    // systemd says is SystemdFailed.
    static const std::pair<const char*, const char*> kNames[] = {
        // systemd's answer to a property it does not know
        {"org.freedesktop.DBus.Error.PropertyReadOnly", common::errors::kUnsupportedProperty},
        {"org.freedesktop.systemd1.NoSuchUnit", common::errors::kNoSuchUnit},
        {"org.freedesktop.systemd1.UnitExists", common::errors::kUnitExists},
        {"org.freedesktop.DBus.Error.NotSupported", common::errors::kNotSupported},
        // No answer in time: systemd (or the bus) is busy, not the request bad.
        {"org.freedesktop.DBus.Error.NoReply", common::errors::kOverloaded},
        {"org.freedesktop.DBus.Error.Timeout", common::errors::kOverloaded},
        {"org.freedesktop.DBus.Error.TimedOut", common::errors::kOverloaded},
    };
    std::string kind = common::errors::kSystemdFailed;
    for (const auto& [theirs, ours] : kNames)
        if (name == theirs) kind = ours;
    return common::makeError(kind, what + ": " + e.getMessage() + " (" + name + ")");
}

SdbusSystemdClient::SdbusSystemdClient(sdbus::IConnection& connection, std::chrono::milliseconds jobTimeout,
                                       common::EventLoop* loop)
    : connection_(connection),
      jobTimeout_(jobTimeout),
      manager_(std::make_unique<client::SystemdManagerProxy>(connection)),
      loop_(loop) {
    manager_->onJob = [this](uint32_t, const sdbus::ObjectPath& job, const std::string& unit,
                             const std::string& result) { onJobRemoved(job, unit, result); };
}

SdbusSystemdClient::~SdbusSystemdClient() {
    if (loop_)
        for (auto& [path, job] : jobs_)
            if (job.timer) loop_->cancelTimer(job.timer);
}

void SdbusSystemdClient::onJobRemoved(const sdbus::ObjectPath& job, const std::string& unit,
                                      const std::string& result) {
    if (awaited_.count(unit)) finishedJobs_[job] = result;
    if (jobs_.count(job)) {
        finishJob(job, result);
    } else if (calling_.count(unit)) {
        // Before the reply that names the job: kept for it. Only for units
        // with a call in flight, so other clients' jobs are not collected.
        earlyJobs_[job] = {unit, result};
    }
}

void SdbusSystemdClient::issue(std::function<void()> send) {
    if (inFlight_ >= kMaxInFlight) {
        waiting_.push_back(std::move(send));
        return;
    }
    ++inFlight_;
    send();
}

void SdbusSystemdClient::replied() {
    --inFlight_;
    if (waiting_.empty()) return;
    auto next = std::move(waiting_.front());
    waiting_.pop_front();
    ++inFlight_;
    next();
}

void SdbusSystemdClient::jobAsync(const std::string& unit, const std::string& what, std::function<void(JobReply)> send,
                                  Completion done, std::function<void()> accepted) {
    issue([this, unit, what, send = std::move(send), done = std::move(done), accepted = std::move(accepted)]() mutable {
        // Interest in the unit's JobRemoved before the call: it can come
        // before the reply.
        ++calling_[unit];
        send([this, unit, what, done, accepted](sdbus_compat::ReplyError error, sdbus::ObjectPath job) {
            replied();
            std::optional<std::string> early;
            if (auto it = earlyJobs_.find(job); it != earlyJobs_.end()) {
                early = it->second.second;
                earlyJobs_.erase(it);
            }
            if (--calling_[unit] == 0) {
                calling_.erase(unit);
                // Other jobs of the unit that ended meanwhile are not ours.
                std::erase_if(earlyJobs_, [&](const auto& e) { return e.second.first == unit; });
            }
            if (error) return done(systemdError(*error, what));
            if (accepted) accepted();
            if (early) {
                const auto result = *early;
                jobs_[job] = PendingJob{unit, what, done, 0};
                return finishJob(job, result);
            }
            auto& pending = jobs_[job];
            pending = PendingJob{unit, what, done, 0};
            if (loop_)
                pending.timer = loop_->addTimer(common::EventLoop::Clock::now() + jobTimeout_, [this, job] {
                    auto it = jobs_.find(job);
                    if (it == jobs_.end()) return;
                    it->second.timer = 0;
                    auto timedOut = std::move(it->second);
                    jobs_.erase(it);
                    timedOut.done(common::makeError(common::errors::kOverloaded, timedOut.what + ": job " + std::string(job) +
                                                                         " did not finish in " +
                                                                         std::to_string(jobTimeout_.count()) + " ms"));
                });
        });
    });
}

void SdbusSystemdClient::finishJob(const std::string& job, const std::string& result) {
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return;
    auto finished = std::move(it->second);
    jobs_.erase(it);
    if (finished.timer && loop_) loop_->cancelTimer(finished.timer);
    if (result != "done")
        return finished.done(
            common::makeError(common::errors::kSystemdFailed, finished.what + ": job finished with result '" + result + "'"));
    finished.done({});
}

sdbus::Struct<std::string, sdbus::Variant> SdbusSystemdClient::processesProperty(
    const std::vector<uint32_t>& pids) const {
    if (pidfds_) {
        std::vector<sdbus::UnixFd> fds;
        for (auto pid : pids) {
            const int fd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
            if (fd < 0) break;
            fds.emplace_back(fd, sdbus::adopt_fd);
        }
        if (fds.size() == pids.size()) return {std::string("PIDFDs"), sdbus::Variant(fds)};
    }
    return {std::string("PIDs"), sdbus::Variant(pids)};
}

void SdbusSystemdClient::startScopeAsync(const std::string& unit, const std::vector<uint32_t>& pids,
                                         const UnitProperties& properties, const AuxUnits& auxUnits, Completion done) {
    UnitProperties props = properties;
    props.push_back(processesProperty(pids));
    std::vector<sdbus::Struct<std::string, UnitProperties>> aux;
    for (const auto& a : auxUnits.units) aux.emplace_back(a.name, a.properties);
    auto once = [this, unit, props, aux, accepted = auxUnits.accepted](Completion finished) {
        if (inFlight_ >= kMaxInFlight)
            spdlog::debug("The start of {} waits behind {} calls to systemd", unit, waiting_.size());
        jobAsync(
            unit, "start scope " + unit,
            [this, unit, props, aux](JobReply reply) {
                manager_->raw()
                    .callMethodAsync("StartTransientUnit")
                    .onInterface(kManagerInterface)
                    .withArguments(unit, std::string("fail"), props, aux)
                    .withTimeout(jobTimeout_)
                    .uponReplyInvoke(std::move(reply));
            },
            std::move(finished), accepted);
    };
    startResettingFailedAsync(*this, unit, std::move(once), std::move(done));
}

void SdbusSystemdClient::startSliceAsync(const std::string& unit, const UnitProperties& properties, Completion done) {
    auto once = [this, unit, properties](Completion finished) {
        jobAsync(
            unit, "start slice " + unit,
            [this, unit, properties](JobReply reply) {
                const std::vector<sdbus::Struct<std::string, UnitProperties>> aux;
                manager_->raw()
                    .callMethodAsync("StartTransientUnit")
                    .onInterface(kManagerInterface)
                    .withArguments(unit, std::string("fail"), properties, aux)
                    .withTimeout(jobTimeout_)
                    .uponReplyInvoke(std::move(reply));
            },
            std::move(finished));
    };
    startResettingFailedAsync(*this, unit, std::move(once), std::move(done));
}

void SdbusSystemdClient::unitJobAsync(const std::string& method, const std::string& unit, const std::string& mode,
                                      const std::string& what, Completion done) {
    jobAsync(
        unit, what,
        [this, method, unit, mode](JobReply reply) {
            manager_->raw()
                .callMethodAsync(method)
                .onInterface(kManagerInterface)
                .withArguments(unit, mode)
                .withTimeout(jobTimeout_)
                .uponReplyInvoke(std::move(reply));
        },
        std::move(done));
}

void SdbusSystemdClient::stopUnitAsync(const std::string& unit, Completion done) {
    unitJobAsync("StopUnit", unit, "replace", "stop " + unit, std::move(done));
}

void SdbusSystemdClient::setUnitPropertiesAsync(const std::string& unit, const UnitProperties& properties,
                                                Completion done) {
    // No job: the reply is the result.
    issue([this, unit, properties, done = std::move(done)] {
        manager_->raw()
            .callMethodAsync("SetUnitProperties")
            .onInterface(kManagerInterface)
            .withArguments(unit, true, properties)
            .withTimeout(jobTimeout_)
            .uponReplyInvoke([this, unit, done](sdbus_compat::ReplyError error) {
                replied();
                if (error) return done(systemdError(*error, "set properties of " + unit));
                done({});
            });
    });
}

namespace {

// Issues `method` with `args` on systemd's manager object and completes with
// its reply (no job): for calls that only act and answer.
template <typename... Args>
void replyOnly(sdbus::IProxy& proxy, const char* method, std::chrono::milliseconds timeout, std::string what,
               SystemdClient::Completion done, std::function<void()> replied, Args... args) {
    proxy.callMethodAsync(method)
        .onInterface(kManagerInterface)
        .withArguments(args...)
        .withTimeout(timeout)
        .uponReplyInvoke([what = std::move(what), done = std::move(done),
                          replied = std::move(replied)](sdbus_compat::ReplyError error) {
            replied();
            if (error) return done(systemdError(*error, what));
            done({});
        });
}

}  // namespace

void SdbusSystemdClient::killUnitAsync(const std::string& unit, const std::string& whom, int signal, Completion done) {
    issue([this, unit, whom, signal, done = std::move(done)] {
        replyOnly(manager_->raw(), "KillUnit", jobTimeout_, "kill " + unit, done, [this] { replied(); }, unit, whom,
                  signal);
    });
}

void SdbusSystemdClient::freezeUnitAsync(const std::string& unit, Completion done) {
    issue([this, unit, done = std::move(done)] {
        replyOnly(manager_->raw(), "FreezeUnit", jobTimeout_, "freeze " + unit, done, [this] { replied(); }, unit);
    });
}

void SdbusSystemdClient::thawUnitAsync(const std::string& unit, Completion done) {
    issue([this, unit, done = std::move(done)] {
        replyOnly(manager_->raw(), "ThawUnit", jobTimeout_, "thaw " + unit, done, [this] { replied(); }, unit);
    });
}

void SdbusSystemdClient::resetFailedUnitAsync(const std::string& unit, Completion done) {
    issue([this, unit, done = std::move(done)] {
        replyOnly(manager_->raw(), "ResetFailedUnit", jobTimeout_, "reset failed " + unit, done, [this] { replied(); },
                  unit);
    });
}

void SdbusSystemdClient::unitStateAsync(const std::string& unit, StateCompletion done) {
    // One call whatever the unit's state: ListUnitsByNames answers for a
    // unit that is not loaded too (load state "not-found", "inactive").
    using Row = sdbus::Struct<std::string, std::string, std::string, std::string, std::string, std::string,
                              sdbus::ObjectPath, uint32_t, std::string, sdbus::ObjectPath>;
    issue([this, unit, done = std::move(done)] {
        manager_->raw()
            .callMethodAsync("ListUnitsByNames")
            .onInterface(kManagerInterface)
            .withArguments(std::vector<std::string>{unit})
            .withTimeout(jobTimeout_)
            .uponReplyInvoke([this, unit, done](sdbus_compat::ReplyError error, std::vector<Row> rows) {
                replied();
                if (error) return done(systemdError(*error, "read the state of " + unit));
                if (rows.empty()) return done(UnitState{"inactive", "dead"});
                done(UnitState{rows.front().get<3>(), rows.front().get<4>()});
            });
    });
}

void SdbusSystemdClient::unitPathAsync(const std::string& unit, ValueCompletion<sdbus::ObjectPath> done) {
    issue([this, unit, done = std::move(done)] {
        manager_->raw()
            .callMethodAsync("GetUnit")
            .onInterface(kManagerInterface)
            .withArguments(unit)
            .withTimeout(jobTimeout_)
            .uponReplyInvoke([this, unit, done](sdbus_compat::ReplyError error, sdbus::ObjectPath path) {
                replied();
                if (error) return done(systemdError(*error, "find " + unit));
                done(std::move(path));
            });
    });
}

void SdbusSystemdClient::unitPropertiesAsync(const std::string& unit, const std::string& interface,
                                             ValueCompletion<Properties> done) {
    unitPathAsync(unit, [this, unit, interface, done = std::move(done)](common::Result<sdbus::ObjectPath> path) {
        if (!path) return done(path.error());
        issue([this, unit, interface, path = *path, done] {
            // A proxy of the unit's object for this one call, kept by its reply.
            std::shared_ptr<sdbus::IProxy> unitProxy =
                sdbus::createProxy(connection_, sdbus_compat::ServiceName{kService}, sdbus::ObjectPath{path});
            unitProxy->callMethodAsync("GetAll")
                .onInterface("org.freedesktop.DBus.Properties")
                .withArguments(interface)
                .withTimeout(jobTimeout_)
                .uponReplyInvoke(
                    [this, unit, interface, done, unitProxy](sdbus_compat::ReplyError error, Properties props) {
                        replied();
                        if (error) return done(systemdError(*error, "read " + interface + " of " + unit));
                        done(std::move(props));
                    });
        });
    });
}

namespace {

// A property of a GetAll answer, of the type it must have.
template <class T>
common::Result<T> property(const std::map<std::string, sdbus::Variant>& props, const std::string& name,
                           const std::string& unit) {
    const auto it = props.find(name);
    if (it == props.end() || !it->second.containsValueOfType<T>())
        return common::makeError(common::errors::kSystemdFailed, "systemd gave no " + name + " of " + unit);
    return it->second.get<T>();
}

}  // namespace

void SdbusSystemdClient::controlGroupAsync(const std::string& unit, ValueCompletion<std::string> done) {
    unitPropertiesAsync(unit, "org.freedesktop.systemd1.Scope",
                        [unit, done = std::move(done)](common::Result<Properties> props) {
                            if (!props) return done(props.error());
                            done(property<std::string>(*props, "ControlGroup", unit));
                        });
}

void SdbusSystemdClient::unitInfoAsync(const std::string& unit, ValueCompletion<UnitInfo> done) {
    unitPropertiesAsync(unit, kUnitInterface, [this, unit, done = std::move(done)](common::Result<Properties> props) {
        if (!props) return done(props.error());
        auto active = property<std::string>(*props, "ActiveState", unit);
        auto sub = property<std::string>(*props, "SubState", unit);
        auto since = property<uint64_t>(*props, "ActiveEnterTimestamp", unit);
        if (!active || !sub || !since) return done(!active ? active.error() : !sub ? sub.error() : since.error());
        UnitInfo info{"", UnitState{*active, *sub}, *since};
        // Slice= is on the unit type's own interface (systemd's
        // src/core/dbus-scope.c and dbus-slice.c both add the cgroup context's).
        const bool slice = unit.size() > 6 && unit.compare(unit.size() - 6, 6, ".slice") == 0;
        unitPropertiesAsync(unit, slice ? "org.freedesktop.systemd1.Slice" : "org.freedesktop.systemd1.Scope",
                            [unit, info, done](common::Result<Properties> scope) mutable {
                                if (!scope) return done(scope.error());
                                auto slice = property<std::string>(*scope, "Slice", unit);
                                if (!slice) return done(slice.error());
                                info.slice = *slice;
                                done(std::move(info));
                            });
    });
}

void SdbusSystemdClient::listUnitsAsync(const std::string& pattern, ValueCompletion<std::vector<std::string>> done) {
    using Row = sdbus::Struct<std::string, std::string, std::string, std::string, std::string, std::string,
                              sdbus::ObjectPath, uint32_t, std::string, sdbus::ObjectPath>;
    issue([this, pattern, done = std::move(done)] {
        manager_->raw()
            .callMethodAsync("ListUnitsByPatterns")
            .onInterface(kManagerInterface)
            .withArguments(std::vector<std::string>{}, std::vector<std::string>{pattern})
            .withTimeout(jobTimeout_)
            .uponReplyInvoke([this, pattern, done](sdbus_compat::ReplyError error, std::vector<Row> rows) {
                replied();
                if (error) return done(systemdError(*error, "list units " + pattern));
                std::vector<std::string> names;
                for (const auto& r : rows) names.push_back(r.get<0>());
                done(std::move(names));
            });
    });
}

void SdbusSystemdClient::roundTripAsync(const std::string& unit, Completion done) {
    // "fail": never replaces a job of the unit's that is queued. The
    // anchor job of a transaction is kept even when the unit is active
    // already (src/core/transaction.c, transaction_drop_redundant()), so
    // it goes through the run queue like any other.
    unitJobAsync("StartUnit", unit, "fail", "round trip through " + unit, std::move(done));
}

common::Result<std::string> SdbusSystemdClient::waitForJob(const std::string& unit, const sdbus::ObjectPath& job) {
    const auto deadline = std::chrono::steady_clock::now() + jobTimeout_;
    for (;;) {
        if (auto it = finishedJobs_.find(job); it != finishedJobs_.end()) {
            auto result = it->second;
            finishedJobs_.erase(it);
            return result;
        }
        if (sdbus_compat::processPending(connection_)) continue;
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline)
            return common::makeError(common::errors::kSystemdFailed, "job " + std::string(job) + " for " + unit +
                                                                         " did not finish in " +
                                                                         std::to_string(jobTimeout_.count()) + " ms");
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
        if (sdbus_compat::pollBus(connection_, static_cast<int>(left)) < 0 && errno != EINTR)
            return common::errnoError("poll the system bus", errno, common::errors::kSystemdFailed);
    }
}

common::Result<void> SdbusSystemdClient::runJob(const std::string& unit, const std::string& what,
                                                const std::function<sdbus::ObjectPath()>& enqueue) {
    // Registered before the call: JobRemoved can arrive before the reply.
    awaited_.insert(unit);
    struct Forget {
        std::set<std::string>& set;
        const std::string& unit;
        ~Forget() { set.erase(unit); }
    } forget{awaited_, unit};
    sdbus::ObjectPath job;
    try {
        job = enqueue();
    } catch (const sdbus::Error& e) {
        return systemdError(e, what);
    }
    auto result = waitForJob(unit, job);
    if (!result) return result.error();
    if (*result != "done") return common::makeError(common::errors::kSystemdFailed, what + ": job finished with result '" + *result + "'");
    return {};
}

common::Result<void> SdbusSystemdClient::startScopeOnce(const std::string& unit, const std::vector<uint32_t>& pids,
                                                        const UnitProperties& properties) {
    UnitProperties props = properties;
    props.push_back(processesProperty(pids));
    return runJob(unit, "start scope " + unit, [&] { return manager_->StartTransientUnit(unit, "fail", props, {}); });
}

common::Result<void> SdbusSystemdClient::startScope(const std::string& unit, const std::vector<uint32_t>& pids,
                                                    const UnitProperties& properties) {
    return startResettingFailed(*this, unit, [&] { return startScopeOnce(unit, pids, properties); });
}

common::Result<void> SdbusSystemdClient::killUnit(const std::string& unit, const std::string& whom, int signal) {
    return attempt("kill " + unit, [&] { manager_->KillUnit(unit, whom, signal); });
}

common::Result<void> SdbusSystemdClient::freezeUnit(const std::string& unit) {
    return attempt("freeze " + unit, [&] { manager_->FreezeUnit(unit); });
}

common::Result<void> SdbusSystemdClient::thawUnit(const std::string& unit) {
    return attempt("thaw " + unit, [&] { manager_->ThawUnit(unit); });
}

common::Result<void> SdbusSystemdClient::stopUnit(const std::string& unit) {
    return runJob(unit, "stop " + unit, [&] { return manager_->StopUnit(unit, "replace"); });
}

common::Result<void> SdbusSystemdClient::resetFailedUnit(const std::string& unit) {
    return attempt("reset-failed " + unit, [&] { manager_->ResetFailedUnit(unit); });
}

common::Result<void> SdbusSystemdClient::setUnitProperties(const std::string& unit, const UnitProperties& properties) {
    return attempt("set properties of " + unit, [&] { manager_->SetUnitProperties(unit, true, properties); });
}

common::Result<sdbus::Variant> SdbusSystemdClient::unitProperty(const std::string& unit, const std::string& interface,
                                                                const std::string& property) {
    try {
        const auto path = manager_->GetUnit(unit);
        auto proxy = sdbus::createProxy(connection_, sdbus_compat::ServiceName{kService}, sdbus::ObjectPath{path});
        return proxy->getProperty(property).onInterface(interface);
    } catch (const sdbus::Error& e) {
        return systemdError(e, "read " + property + " of " + unit);
    }
}

common::Result<std::string> SdbusSystemdClient::controlGroup(const std::string& unit) {
    auto v = unitProperty(unit, "org.freedesktop.systemd1.Scope", "ControlGroup");
    if (!v) return v.error();
    return v->get<std::string>();
}

common::Result<UnitState> SdbusSystemdClient::unitState(const std::string& unit) {
    auto active = unitProperty(unit, kUnitInterface, "ActiveState");
    if (!active) return active.error();
    auto sub = unitProperty(unit, kUnitInterface, "SubState");
    if (!sub) return sub.error();
    return UnitState{active->get<std::string>(), sub->get<std::string>()};
}

common::Result<UnitInfo> SdbusSystemdClient::unitInfo(const std::string& unit) {
    auto state = unitState(unit);
    if (!state) return state.error();
    auto slice = unitProperty(unit, "org.freedesktop.systemd1.Scope", "Slice");
    if (!slice) return slice.error();
    auto since = unitProperty(unit, kUnitInterface, "ActiveEnterTimestamp");
    if (!since) return since.error();
    return UnitInfo{slice->get<std::string>(), *state, since->get<uint64_t>()};
}

common::Result<std::vector<std::string>> SdbusSystemdClient::listUnits(const std::string& pattern) {
    try {
        std::vector<std::string> names;
        for (const auto& u : manager_->ListUnitsByPatterns({}, {pattern})) names.push_back(u.get<0>());
        return names;
    } catch (const sdbus::Error& e) {
        return systemdError(e, "list units " + pattern);
    }
}

common::Result<std::string> SdbusSystemdClient::version() {
    try {
        return manager_->Version();
    } catch (const sdbus::Error& e) {
        return systemdError(e, "read systemd's version");
    }
}

}  // namespace taskscope::scope
