// Nomad's Driver service: each call converted to the manager's API
// (driver_service.hpp).
#include "nomad/driver_service.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <thread>

#include <sdbus-c++/sdbus-c++.h>
#include "common/error_names.hpp"
#include "common/sdbus_compat.hpp"
#include "nomad/cty_msgpack.hpp"
#include "nomad/devices_network.hpp"
#include "nomad/exec_stream.hpp"
#include "nomad/grpc_errors.hpp"
#include "nomad/node_task_config.hpp"
#include "nomad/plugin_facts.hpp"
#include "nomad/plugin_log.hpp"
#include "nomad/step_log.hpp"
#include "nomad/taskscope_client.hpp"

namespace taskscope::nomad {

namespace errors = common::errors;

namespace {

namespace base = hashicorp::nomad::plugins::base::proto;
namespace pb = hashicorp::nomad::plugins::drivers::proto;
using common::Result;

// The fingerprint follows the manager's bus name (NameOwnerChanged); this
// slow refresh only catches what the name does not show (a manager that
// holds its name but stopped answering).
constexpr int kFingerprintRefreshMs = 60000;
constexpr int kFingerprintTickMs = 500;  // how soon a shutdown or a cancel is seen
constexpr uint32_t kMaxExecOutput = 4u << 20;  // the streamer's cap for ExecOnce
constexpr uint32_t kMaxExecTimeoutMs = 3600 * 1000;

Result<ClientLease> client() { return Client::acquire(); }

// Go's zero time.Time (0001-01-01T00:00:00Z) as a Timestamp. Nomad's
// client converts both times of a TaskStatus with ptypes.Timestamp, which
// fails for an absent one (plugins/drivers/utils.go taskStatusFromProto),
// and its own drivers send the zero time for "not yet"
// (taskStatusToProto of a zero CompletedAt), which converts back to a
// time.Time whose IsZero() is true.
constexpr int64_t kGoZeroTimeSeconds = -62135596800;

void setZeroTime(google::protobuf::Timestamp& out) {
    out.set_seconds(kGoZeroTimeSeconds);
    out.set_nanos(0);
}

// GetTask's RFC 3339 times ("2026-11-25T03:33:13.123456Z") as a Timestamp;
// the zero time when there is none (or it cannot be read).
void setTime(const std::string& text, google::protobuf::Timestamp& out) {
    setZeroTime(out);
    if (text.empty()) return;
    tm t{};
    const char* rest = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &t);
    if (!rest) return;
    long micros = 0;
    if (*rest == '.') micros = std::strtol(rest + 1, nullptr, 10);
    if (micros < 0 || micros > 999999) micros = 0;
    out.set_seconds(::timegm(&t));
    out.set_nanos(static_cast<int32_t>(micros * 1000));
}

int64_t durationMs(const google::protobuf::Duration& d) { return d.seconds() * 1000 + d.nanos() / 1000000; }

// A sample as Nomad's client reads it (plugins/drivers/utils.go
// TaskStatsFromProto) and shows it: `nomad alloc status -stats` prints
// total_ticks as the task's MHz and, per measured field, its value
// (command/alloc_status.go outputTaskResources,
// outputVerboseResourceUsage); the client publishes every field as
// client.allocs.{cpu,memory}.* (client/allocrunner/taskrunner/
// task_runner.go setGaugeForCPU, setGaugeForMemory; a memory value is
// published when measured or non-zero).
void toNomadStats(const std::string& id, const StatsSample& s, const Compute& compute, pb::TaskStats& out) {
    out.set_id(id);
    out.mutable_timestamp()->set_seconds(static_cast<int64_t>(s.timestampUs / 1000000));
    out.mutable_timestamp()->set_nanos(static_cast<int32_t>(s.timestampUs % 1000000 * 1000));
    auto* cpu = out.mutable_agg_resource_usage()->mutable_cpu();
    auto* mem = out.mutable_agg_resource_usage()->mutable_memory();
    auto has = [&](int bit) { return (s.measured >> bit) & 1; };
    // Nomad's user/system "mode" values are percentages, like its executor's.
    if (has(3)) {
        cpu->set_percent(s.cpuPercent);
        cpu->add_measured_fields(pb::CPUUsage::PERCENT);
        // Filled like Nomad's executor fills it, and like it not listed as
        // measured: alloc status prints a measured field's name as a column
        // but has no value for "Total Ticks", which would shift every
        // column after it (command/alloc_status.go; the executor's
        // ExecutorCgroupMeasuredCpuStats, drivers/shared/executor/
        // executor_linux_cgo.go, lists no TOTAL_TICKS either).
        cpu->set_total_ticks(ticksConsumed(s.cpuPercent, compute));
    }
    if (has(4)) cpu->set_user_mode(s.cpuUserPercent), cpu->add_measured_fields(pb::CPUUsage::USER_MODE);
    if (has(5)) cpu->set_system_mode(s.cpuSystemPercent), cpu->add_measured_fields(pb::CPUUsage::SYSTEM_MODE);
    if (has(6)) cpu->set_throttled_periods(s.throttledPeriods), cpu->add_measured_fields(pb::CPUUsage::THROTTLED_PERIODS);
    if (has(7)) cpu->set_throttled_time(s.throttledTimeUs * 1000), cpu->add_measured_fields(pb::CPUUsage::THROTTLED_TIME);
    if (has(8)) mem->set_rss(s.memoryRss), mem->add_measured_fields(pb::MemoryUsage::RSS);
    if (has(9)) mem->set_cache(s.memoryCache), mem->add_measured_fields(pb::MemoryUsage::CACHE);
    if (has(10)) mem->set_swap(s.memorySwap), mem->add_measured_fields(pb::MemoryUsage::SWAP);
    if (has(11)) mem->set_usage(s.memoryUsage), mem->add_measured_fields(pb::MemoryUsage::USAGE);
    if (has(12)) mem->set_max_usage(s.memoryPeak), mem->add_measured_fields(pb::MemoryUsage::MAX_USAGE);
    if (has(13)) mem->set_kernel_usage(s.memoryKernel), mem->add_measured_fields(pb::MemoryUsage::KERNEL_USAGE);
    // kernel_max_usage: the streamer reads no kernel memory peak (cgroup v2
    // has none; v1's memory.kmem.max_usage_in_bytes is not sampled), so it
    // is not measured. resource_usage_by_pid stays empty: the streamer
    // samples the task's cgroup, not its processes (Nomad's CLI and metrics
    // show only the aggregate).
}

}  // namespace

grpc::Status DriverService::Init(Ctx*, const pb::InitRequest*, pb::InitResponse*) {
    if (state_.isShutdown()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, kPluginShutdown);
    // Nomad calls it after every dispense: after SetConfig on a launch, and
    // on its own after a reattach (no SetConfig then: the process kept its
    // config). It takes a bus client from the pool and asks the manager
    // for its facts, so that the first StartTask after a launch or an
    // agent restart finds a warm connection; nothing else changes, so a
    // second call is the same as the first. A manager that cannot be
    // reached is reported, not an error: Nomad would kill the plugin and
    // dispense it again (drivermanager/instance.go dispense), while the
    // fingerprint already tells it the driver is unhealthy until the
    // manager is back.
    auto c = client();
    auto facts = c ? (*c)->managerFacts() : Result<std::pair<std::string, std::string>>(c.error());
    const Compute compute = state_.compute();
    logRecord("info", "initialized",
              {{"manager", facts ? "taskscope " + facts->first + ", cgroup " + facts->second
                                 : "not reachable: " + facts.error().message},
               {"compute_mhz", std::to_string(static_cast<int64_t>(compute.totalMhz))},
               {"cores", std::to_string(compute.cores)},
               {"pid", std::to_string(::getpid())}});
    return grpc::Status::OK;
}

grpc::Status DriverService::Shutdown(Ctx*, const pb::ShutdownRequest*, pb::ShutdownResponse*) {
    // Nomad's client asks right before go-plugin's Kill (drivermanager/
    // instance.go cleanup): the plugin ends its streams and exits once
    // this answer is out, so that Kill finds it gone. Tasks keep running:
    // they are taskscope's, and a new plugin recovers them.
    logRecord("info", "shutdown requested by Nomad");
    state_.shutdown();
    return grpc::Status::OK;
}

grpc::Status DriverService::TaskConfigSchema(Ctx*, const pb::TaskConfigSchemaRequest*,
                                             pb::TaskConfigSchemaResponse* out) {
    *out->mutable_spec() = taskConfigSchema();
    return grpc::Status::OK;
}

grpc::Status DriverService::Capabilities(Ctx*, const pb::CapabilitiesRequest*, pb::CapabilitiesResponse* out) {
    fillCapabilities(*out->mutable_capabilities(), state_.driverConfig().dynamicWorkloadUsers);
    return grpc::Status::OK;
}

namespace {

pb::FingerprintResponse fingerprintNow(const PluginState& state) {
    pb::FingerprintResponse f;
    if (!state.enabled()) {
        f.set_health(pb::FingerprintResponse::UNDETECTED);
        f.set_health_description("disabled in the plugin config");
        return f;
    }
    auto c = client();
    auto facts = c ? (*c)->managerFacts() : Result<std::pair<std::string, std::string>>(c.error());
    if (!facts) {
        f.set_health(pb::FingerprintResponse::UNHEALTHY);
        f.set_health_description("taskscope-manager is not reachable: " + facts.error().message);
        return f;
    }
    f.set_health(pb::FingerprintResponse::HEALTHY);
    f.set_health_description("healthy");
    auto& attrs = *f.mutable_attributes();
    attrs["driver.taskscope"].set_bool_val(true);
    attrs["driver.taskscope.version"].set_string_val(facts->first);
    attrs["unique.cgroups.version"].set_string_val(facts->second);
    return f;
}

// A connection of the stream's own that hears the manager's bus name
// change owner: appearing, vanishing or restarting.
struct ManagerWatch {
    std::unique_ptr<Client> conn;
    std::optional<sdbus::Slot> match;

    bool arm(std::atomic<bool>& changed) {
        auto c = Client::connect();
        if (!c) return false;
        try {
            match.emplace(
                sdbus_compat::addMatch((*c)->connection(),
                                       "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                                       "member='NameOwnerChanged',arg0='org.taskscope.Manager1'",
                                       [&changed](sdbus::Message&) { changed = true; }));
        } catch (const sdbus::Error&) {
            return false;
        }
        conn = std::move(*c);
        return true;
    }
    void reset() {
        match.reset();
        conn.reset();
    }
};

}  // namespace

grpc::Status DriverService::Fingerprint(Ctx* ctx, const pb::FingerprintRequest*,
                                        grpc::ServerWriter<pb::FingerprintResponse>* writer) {
    // Nomad wants one at once and then one whenever the state changes.
    // The state is read again when the manager's name changes owner, and
    // every refresh period; nothing is asked in between.
    using Clock = std::chrono::steady_clock;
    std::atomic<bool> changed{true};
    ManagerWatch watch;
    std::string last;
    auto refreshAt = Clock::now();
    for (;;) {
        if (!watch.conn && watch.arm(changed)) changed = true;  // (re)armed: whatever happened meanwhile counts
        if (changed || Clock::now() >= refreshAt) {
            changed = false;
            refreshAt = Clock::now() + std::chrono::milliseconds(kFingerprintRefreshMs);
            const auto f = fingerprintNow(state_);
            // Map order is not fixed in the encoding: compare what it says.
            std::string key = std::to_string(f.health()) + f.health_description();
            std::map<std::string, std::string> sorted;
            for (const auto& [k, v] : f.attributes()) sorted[k] = v.ShortDebugString();
            for (const auto& [k, v] : sorted) key += "|" + k + "=" + v;
            if (key != last) {
                if (!writer->Write(f)) return grpc::Status::OK;
                last = key;
            }
        }
        if (watch.conn) {
            watch.conn->pump(kFingerprintTickMs);
            if (watch.conn->broken()) watch.reset();  // the bus went away: re-armed on the next round
            if (state_.isShutdown()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, kPluginShutdown);
        } else if (state_.waitShutdown(kFingerprintTickMs)) {
            return grpc::Status(grpc::StatusCode::UNAVAILABLE, kPluginShutdown);
        }
        if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
    }
}

grpc::Status DriverService::RecoverTask(Ctx*, const pb::RecoverTaskRequest* in, pb::RecoverTaskResponse*) {
    const std::string id = in->task_id().empty() ? in->handle().config().id() : in->task_id();
    auto key = decodeDriverState(in->handle().driver_state());
    if (!key) return toStatus(key.error());
    auto c = client();
    if (!c) return toStatus(c.error());
    // The task must still be known to the manager (running or exited and
    // not yet forgotten); a task it lost is gone for Nomad too.
    auto t = (*c)->getTask(key->allocId, key->task);
    if (!t) return toStatus(t.error().context("recover task " + id));
    state_.remember(id, *key);
    return grpc::Status::OK;
}

common::Result<std::string> DriverService::replaceLeftover(Client& c, const TaskKey& key) {
    auto t = c.getTask(key.allocId, key.task);
    if (!t) return t.error().name == errors::kNoSuchTask ? common::Result<std::string>(std::string("gone")) : t.error();
    const std::string was = t->state;
    if (!exitOf(*t)) {
        if (auto r = c.stopTask(key.allocId, key.task, "SIGKILL", 0); !r && r.error().name != errors::kNotRunning)
            return r.error();
        auto exit = c.waitExit(key.allocId, key.task, [this] { return state_.isShutdown(); });
        if (!exit) return exit.error();
    }
    if (auto r = c.forgetTask(key.allocId, key.task); !r && r.error().name != errors::kNoSuchTask) return r.error();
    return was;
}

grpc::Status DriverService::StartTask(Ctx*, const pb::StartTaskRequest* in, pb::StartTaskResponse* out) {
    StepLog log("StartTask");
    const auto& cfg = in->task();
    if (state_.find(cfg.id()))
        return startFailure(common::makeError(errors::kTaskExists, "task " + cfg.id() + " was already started"));
    auto key = taskKey(cfg);
    if (!key) return startFailure(key.error());
    auto spec = buildTaskSpec(cfg, state_.driverConfig());
    if (!spec) return startFailure(spec.error());
    const std::string specJson = spec->dump();
    log.step("spec");
    auto c = client();
    if (!c) return startFailure(c.error());
    log.step("acquire");
    log.note("connection", (*c)->fresh() ? "new" : "pooled");
    // One bus call: the manager replies once the task runs in its scope
    // (and its output goes to Nomad's fifos, which the manager opens), so
    // nothing is left to poll or wait for here.
    auto started = (*c)->startTask(key->allocId, key->task, specJson);
    if (!started && started.error().name == errors::kTaskExists && !state_.holds(*key)) {
        // The manager has a task of this alloc and task that Nomad holds no
        // handle for: one whose start Nomad saw fail while the manager
        // finished it (its answer lost) or lost it (a crash mid-start whose
        // shim died too), or one whose RecoverTask failed. Nomad asks for a fresh start, so
        // the leftover goes first; otherwise every restart Nomad tries
        // would fail the same way.
        auto was = replaceLeftover(**c, *key);
        if (!was) return startFailure(was.error().context("replace the manager's task without a handle"));
        log.step("leftover");
        log.note("leftover", *was);
        // systemd collects the old scope once its processes are gone, a
        // moment after the exit the manager reported: its name may still be
        // taken for that moment.
        for (int tries = 0;; ++tries) {
            started = (*c)->startTask(key->allocId, key->task, specJson);
            if (started || started.error().name != errors::kUnitExists || tries == 50) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    }
    if (!started) return startFailure(started.error());
    log.step("dbus_start");
    state_.remember(cfg.id(), *key);
    out->set_result(pb::StartTaskResponse::SUCCESS);
    auto* h = out->mutable_handle();
    h->set_version(1);
    *h->mutable_config() = cfg;
    h->set_state(pb::RUNNING);
    h->set_driver_state(encodeDriverState(*key));
    log.step("reply");
    log.done(cfg.id());
    return grpc::Status::OK;
}

grpc::Status DriverService::WaitTask(Ctx* ctx, const pb::WaitTaskRequest* in, pb::WaitTaskResponse* out) {
    auto key = state_.find(in->task_id());
    if (!key) return unknownTask(in->task_id());
    auto c = client();
    if (!c) return toStatus(c.error());
    auto exit = (*c)->waitExit(key->allocId, key->task, [&] { return ctx->IsCancelled() || state_.isShutdown(); });
    if (!exit) {
        if (state_.isShutdown()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, kPluginShutdown);
        return toStatus(exit.error());
    }
    fillExit(*exit, *out->mutable_result());
    return grpc::Status::OK;
}

grpc::Status DriverService::StopTask(Ctx* ctx, const pb::StopTaskRequest* in, pb::StopTaskResponse*) {
    auto key = state_.find(in->task_id());
    if (!key) return unknownTask(in->task_id());
    auto c = client();
    if (!c) return toStatus(c.error());
    const int64_t grace = in->has_timeout() ? durationMs(in->timeout()) : -1;
    if (auto r = (*c)->stopTask(key->allocId, key->task, in->signal(), grace); !r) {
        if (r.error().name == errors::kNotRunning) return grpc::Status::OK;  // already ended: stopped
        return toStatus(r.error());
    }
    // Nomad takes a returned StopTask as "stopped": wait for the exit,
    // which the manager's kill after the grace period guarantees.
    auto exit = (*c)->waitExit(key->allocId, key->task, [&] { return ctx->IsCancelled() || state_.isShutdown(); });
    if (!exit) return toStatus(exit.error());
    return grpc::Status::OK;
}

grpc::Status DriverService::DestroyTask(Ctx* ctx, const pb::DestroyTaskRequest* in, pb::DestroyTaskResponse*) {
    auto key = state_.find(in->task_id());
    if (!key) return grpc::Status::OK;  // nothing of it left here
    auto c = client();
    if (!c) return toStatus(c.error());
    auto t = (*c)->getTask(key->allocId, key->task);
    if (!t && t.error().name == errors::kNoSuchTask) {
        state_.forget(in->task_id());
        return grpc::Status::OK;
    }
    if (!t) return toStatus(t.error());
    if (!exitOf(*t)) {
        if (!in->force())
            return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                "cannot destroy running task " + in->task_id() + " without force");
        if (auto r = (*c)->stopTask(key->allocId, key->task, "SIGKILL", 0); !r && r.error().name != errors::kNotRunning)
            return toStatus(r.error());
        auto exit = (*c)->waitExit(key->allocId, key->task, [&] { return ctx->IsCancelled(); });
        if (!exit) return toStatus(exit.error());
    }
    if (auto r = (*c)->forgetTask(key->allocId, key->task); !r && r.error().name != errors::kNoSuchTask)
        return toStatus(r.error());
    state_.forget(in->task_id());
    return grpc::Status::OK;
}

grpc::Status DriverService::InspectTask(Ctx*, const pb::InspectTaskRequest* in, pb::InspectTaskResponse* out) {
    auto key = state_.find(in->task_id());
    if (!key) return unknownTask(in->task_id());
    auto c = client();
    if (!c) return toStatus(c.error());
    auto t = (*c)->getTask(key->allocId, key->task);
    if (!t) return toStatus(t.error());
    auto* s = out->mutable_task();
    s->set_id(in->task_id());
    s->set_name(key->task);
    const auto exit = exitOf(*t);
    s->set_state(exit ? pb::EXITED : pb::RUNNING);
    // Both times always: the zero time for "not yet" (setTime).
    setTime(t->startedAt, *s->mutable_started_at());
    setTime(exit ? t->finishedAt : std::string(), *s->mutable_completed_at());
    if (exit) fillExit(*exit, *s->mutable_result());
    auto& attrs = *out->mutable_driver()->mutable_attributes();
    attrs["unit"] = t->unit;
    attrs["state"] = t->state;
    attrs["cgroup"] = t->cgroup;
    attrs["pid"] = std::to_string(t->pid);
    return grpc::Status::OK;
}

grpc::Status DriverService::TaskStats(Ctx* ctx, const pb::TaskStatsRequest* in,
                                      grpc::ServerWriter<pb::TaskStatsResponse>* writer) {
    auto key = state_.find(in->task_id());
    if (!key) return unknownTask(in->task_id());
    auto c = client();
    if (!c) return toStatus(c.error());
    int64_t interval = in->has_collection_interval() ? durationMs(in->collection_interval()) : 1000;
    if (interval < 100) interval = 100;  // below the streamer's useful range
    // The streamer samples at the interval asked, so each answer is fresh.
    // It learns a new task from the manager a moment after its start:
    // until then it knows no such task, which is no reason to end.
    bool intervalSet = false;
    uint64_t lastTs = 0;
    const Compute compute = state_.compute();
    for (;;) {
        if (state_.isShutdown()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, kPluginShutdown);
        if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
        if (!intervalSet) intervalSet = (*c)->setStatsInterval(key->allocId, key->task, interval).ok();
        auto s = (*c)->taskStats(key->allocId, key->task);
        if (!s && s.error().name == errors::kNoSuchTask) {
            auto t = (*c)->getTask(key->allocId, key->task);
            if (!t || exitOf(*t)) return grpc::Status::OK;  // the task ended: so does its stream
        }
        if (s && s->timestampUs != lastTs) {
            pb::TaskStatsResponse r;
            toNomadStats(in->task_id(), *s, compute, *r.mutable_stats());
            if (!writer->Write(r)) return grpc::Status::OK;
            lastTs = s->timestampUs;
        }
        if (state_.waitShutdown(static_cast<int>(interval)))
            return grpc::Status(grpc::StatusCode::UNAVAILABLE, kPluginShutdown);
    }
}

grpc::Status DriverService::TaskEvents(Ctx* ctx, const pb::TaskEventsRequest*,
                                       grpc::ServerWriter<pb::DriverTaskEvent>*) {
    // taskscope has no driver events of its own to tell: the stream stays
    // open, quiet, until Nomad or a shutdown ends it.
    while (!ctx->IsCancelled())
        if (state_.waitShutdown(1000)) return grpc::Status(grpc::StatusCode::UNAVAILABLE, kPluginShutdown);
    return grpc::Status::OK;
}

grpc::Status DriverService::SignalTask(Ctx*, const pb::SignalTaskRequest* in, pb::SignalTaskResponse*) {
    auto key = state_.find(in->task_id());
    if (!key) return unknownTask(in->task_id());
    auto c = client();
    if (!c) return toStatus(c.error());
    if (auto r = (*c)->signalTask(key->allocId, key->task, in->signal()); !r) return toStatus(r.error());
    return grpc::Status::OK;
}

grpc::Status DriverService::ExecTask(Ctx*, const pb::ExecTaskRequest* in, pb::ExecTaskResponse* out) {
    auto key = state_.find(in->task_id());
    if (!key) return unknownTask(in->task_id());
    if (in->command().empty()) return toStatus(common::makeError(errors::kInvalidArgument, "no command"));
    // A connection of its own, not a pooled one: on a timeout it is closed,
    // and the streamer hangs up the sessions of a caller that left.
    auto c = Client::connect();
    if (!c) return toStatus(c.error());
    int64_t timeout = in->has_timeout() ? durationMs(in->timeout()) : 0;
    if (timeout <= 0 || timeout > kMaxExecTimeoutMs) timeout = kMaxExecTimeoutMs;
    std::vector<std::string> cmd(in->command().begin(), in->command().end());
    auto r = (*c)->execCapture(key->allocId, key->task, cmd, static_cast<uint32_t>(timeout), kMaxExecOutput);
    if (!r) return toStatus(r.error());
    out->set_stdout(r->stdoutText);
    out->set_stderr(r->stderrText);
    fillExit(r->status, *out->mutable_result());
    return grpc::Status::OK;
}

grpc::Status DriverService::CreateNetwork(Ctx*, const pb::CreateNetworkRequest* in, pb::CreateNetworkResponse* out) {
    if (in->alloc_id().empty()) return toStatus(common::makeError(errors::kInvalidArgument, "no alloc_id"));
    auto c = client();
    if (!c) return toStatus(c.error());
    // Mode none: an empty namespace with its loopback. Nomad then runs its
    // own CNI bridge setup into the path returned here.
    auto r = (*c)->createNetwork(in->alloc_id(), R"({"mode":"none"})");
    bool created = true;
    if (!r) {
        // It exists already (a plugin or Nomad restart asks again): hand
        // back the same namespace, saying it was not made now.
        if (r.error().name != errors::kNetworkExists) return toStatus(r.error());
        created = false;
    }
    auto net = (*c)->getNetwork(in->alloc_id());
    if (!net) return toStatus(net.error());
    auto* spec = out->mutable_isolation_spec();
    spec->set_mode(pb::NetworkIsolationSpec::GROUP);
    spec->set_path(net->value("netns", allocNetnsPath(in->alloc_id())));
    (*spec->mutable_labels())["taskscope.network"] = in->alloc_id();
    (*spec->mutable_labels())["taskscope.mode"] = net->value("mode", "none");
    if (!in->hostname().empty()) spec->mutable_hostsconfig()->set_hostname(in->hostname());
    // Nomad's network hook then sets HostsConfig{its address, this name},
    // which StartTask's tasks get as their /etc/hosts (devices_network.hpp).
    (*spec->mutable_labels())[kAllocHostnameLabel] = allocHostname(in->alloc_id(), in->hostname());
    out->set_created(created);
    return grpc::Status::OK;
}

grpc::Status DriverService::DestroyNetwork(Ctx*, const pb::DestroyNetworkRequest* in, pb::DestroyNetworkResponse*) {
    if (in->alloc_id().empty()) return toStatus(common::makeError(errors::kInvalidArgument, "no alloc_id"));
    auto c = client();
    if (!c) return toStatus(c.error());
    // Nomad may ask again for a network already gone (its restart, a
    // retried cleanup): done is done.
    if (auto r = (*c)->destroyNetwork(in->alloc_id()); !r && r.error().name != errors::kNoSuchNetwork)
        return toStatus(r.error());
    return grpc::Status::OK;
}

grpc::ServerBidiReactor<pb::ExecTaskStreamingRequest, pb::ExecTaskStreamingResponse>* DriverService::ExecTaskStreaming(
    grpc::CallbackServerContext*) {
    return new ExecStreamReactor(state_);  // deletes itself in OnDone
}

}  // namespace taskscope::nomad
