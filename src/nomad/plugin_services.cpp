// What every go-plugin and Nomad plugin serves besides the driver itself:
// the plugin's shared state, Nomad's BasePlugin (PluginInfo, ConfigSchema,
// SetConfig) and go-plugin's controller, broker and stdio services.
#include <chrono>

#include "common/error_names.hpp"
#include "nomad/cty_msgpack.hpp"
#include "nomad/driver_service.hpp"
#include "nomad/grpc_errors.hpp"
#include "nomad/plugin_facts.hpp"
#include "nomad/plugin_log.hpp"

namespace taskscope::nomad {

namespace errors = common::errors;

namespace base = hashicorp::nomad::plugins::base::proto;
using common::Result;

// ---- PluginState ----

void PluginState::remember(const std::string& taskId, TaskKey key) {
    std::lock_guard lock(mu_);
    tasks_[taskId] = std::move(key);
}

std::optional<TaskKey> PluginState::find(const std::string& taskId) const {
    std::lock_guard lock(mu_);
    auto it = tasks_.find(taskId);
    if (it == tasks_.end()) return std::nullopt;
    return it->second;
}

bool PluginState::holds(const TaskKey& key) const {
    std::lock_guard lock(mu_);
    for (const auto& [id, k] : tasks_)
        if (k.allocId == key.allocId && k.task == key.task) return true;
    return false;
}

void PluginState::forget(const std::string& taskId) {
    std::lock_guard lock(mu_);
    tasks_.erase(taskId);
}

void PluginState::setDriverConfig(const DriverConfig& c) {
    std::lock_guard lock(mu_);
    driverConfig_ = c;
}

DriverConfig PluginState::driverConfig() const {
    std::lock_guard lock(mu_);
    return driverConfig_;
}

void PluginState::setCompute(const Compute& c) {
    std::lock_guard lock(mu_);
    compute_ = c;
}

Compute PluginState::compute() const {
    std::lock_guard lock(mu_);
    return compute_;
}

void PluginState::shutdown() {
    {
        std::lock_guard lock(mu_);
        shutdown_ = true;
    }
    cv_.notify_all();
}

bool PluginState::waitShutdown(int ms) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return shutdown_.load(); });
    return shutdown_;
}

// ---- BasePlugin ----

grpc::Status BaseService::PluginInfo(grpc::ServerContext*, const base::PluginInfoRequest*,
                                     base::PluginInfoResponse* out) {
    out->set_type(base::DRIVER);
    out->add_plugin_api_versions(kPluginApiVersion);
    out->set_plugin_version(TASKSCOPE_VERSION);
    out->set_name(kPluginName);
    return grpc::Status::OK;
}

grpc::Status BaseService::ConfigSchema(grpc::ServerContext*, const base::ConfigSchemaRequest*,
                                       base::ConfigSchemaResponse* out) {
    *out->mutable_spec() = configSchema();
    return grpc::Status::OK;
}

grpc::Status BaseService::SetConfig(grpc::ServerContext*, const base::SetConfigRequest* in, base::SetConfigResponse*) {
    // The API version the loader chose from PluginInfo's list (semver
    // equality: helper/pluginutils/loader/init.go selectApiVersion); empty
    // from a caller that does not say.
    const auto& api = in->plugin_api_version();
    auto bare = [](const std::string& v) { return v.rfind('v', 0) == 0 ? v.substr(1) : v; };
    if (!api.empty() && bare(api) != bare(kPluginApiVersion))
        return toStatus(common::makeError(
            errors::kInvalidArgument, "plugin API version " + api + " is not supported (" + kPluginApiVersion + ")"));
    auto config = decodeCty(in->msgpack_config());
    if (!config) return toStatus(config.error());
    if (!config->is_object())
        return toStatus(common::makeError(errors::kInvalidConfig, "the plugin config is not an object"));
    // Validated where exec validates its block (SetConfig: Config.validate
    // and the ID validator): a bad value fails the dispense, naming the key.
    auto driver = parseDriverConfig(*config);
    if (!driver) return toStatus(driver.error());
    // The node's compute as Nomad's client detected it, sent when the task
    // runner dispenses the driver (plugins/base/base.go AgentConfig,
    // client/pluginmanager/drivermanager); the loader's validation sends
    // none, and neither does a Nomad older than the field.
    Compute compute;
    if (in->nomad_config().driver().has_topology()) compute = computeFromTopology(in->nomad_config().driver().topology());
    if (!compute.known()) compute = hostCompute();
    state_.setEnabled(driver->enabled);
    state_.setDriverConfig(*driver);
    state_.setCompute(compute);
    return grpc::Status::OK;
}

// ---- GRPCController ----

grpc::Status ControllerService::Shutdown(grpc::ServerContext*, const plugin::Empty*, plugin::Empty*) {
    logRecord("debug", "go-plugin controller: shutdown");
    state_.shutdown();
    return grpc::Status::OK;
}

// ---- GRPCBroker ----

grpc::Status BrokerService::StartStream(grpc::ServerContext* ctx,
                                        grpc::ServerReaderWriter<plugin::ConnInfo, plugin::ConnInfo>* stream) {
    // Read blocks: a shutdown cancels the call to end it.
    std::atomic<bool> done{false};
    std::thread watch([&] {
        while (!done)
            if (state_.waitShutdown(500)) {
                ctx->TryCancel();
                return;
            }
    });
    plugin::ConnInfo in;
    while (stream->Read(&in)) {
        if (!in.has_knock() || !in.knock().knock() || in.knock().ack()) continue;
        // A dial of a server the plugin would offer over the multiplexed
        // connection (go-plugin grpc_broker.go knock): there is none.
        plugin::ConnInfo refuse;
        refuse.set_service_id(in.service_id());
        refuse.mutable_knock()->set_knock(true);
        refuse.mutable_knock()->set_ack(true);
        refuse.mutable_knock()->set_error("nomad-driver-taskscope offers no brokered server " +
                                          std::to_string(in.service_id()));
        if (!stream->Write(refuse)) break;
    }
    done = true;
    watch.join();
    return grpc::Status::OK;
}

// ---- GRPCStdio ----

grpc::Status StdioService::StreamStdio(grpc::ServerContext* ctx, const google::protobuf::Empty*,
                                       grpc::ServerWriter<plugin::StdioData>*) {
    while (!ctx->IsCancelled())
        if (state_.waitShutdown(1000)) break;
    return grpc::Status::OK;
}

// ---- Driver ----

}  // namespace taskscope::nomad
