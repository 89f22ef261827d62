#pragma once
// The gRPC services of the plugin process: Nomad's BasePlugin and Driver,
// and go-plugin's GRPCController, GRPCBroker and GRPCStdio (the health
// service is grpc++'s own). Every method converts between protobuf and
// taskscope's D-Bus API (taskscope_client) and nothing more; the mapping
// of a task lives in task_spec_builder.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

#include "base.grpc.pb.h"
#include "driver.grpc.pb.h"
#include "nomad/cpu_compute.hpp"
#include "nomad/task_spec_builder.hpp"
#include "plugin.grpc.pb.h"

namespace taskscope::nomad {

class Client;

/// State shared by the services: the config and the tasks this plugin
/// process knows (Nomad's task ID -> taskscope's alloc and task).
class PluginState {
public:
    void setEnabled(bool enabled) { enabled_ = enabled; }
    bool enabled() const { return enabled_; }
    void setDriverConfig(const DriverConfig& c);
    DriverConfig driverConfig() const;
    /// The node's compute for total_ticks (SetConfig's topology, else the
    /// host's own).
    void setCompute(const Compute& c);
    Compute compute() const;

    void remember(const std::string& taskId, TaskKey key);
    std::optional<TaskKey> find(const std::string& taskId) const;
    /// Some task ID Nomad gave holds this alloc and task.
    bool holds(const TaskKey& key) const;
    void forget(const std::string& taskId);

    /// GRPCController/Shutdown or Driver/Shutdown: every stream ends, main
    /// stops the server and the process exits.
    void shutdown();
    bool isShutdown() const { return shutdown_; }
    /// Waits up to `ms` or until shutdown; true when shut down.
    bool waitShutdown(int ms);

private:
    std::atomic<bool> enabled_{true};
    std::atomic<bool> shutdown_{false};
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::map<std::string, TaskKey> tasks_;
    DriverConfig driverConfig_;
    Compute compute_;
};

class BaseService final : public hashicorp::nomad::plugins::base::proto::BasePlugin::Service {
public:
    explicit BaseService(PluginState& state) : state_(state) {}
    grpc::Status PluginInfo(grpc::ServerContext*, const hashicorp::nomad::plugins::base::proto::PluginInfoRequest*,
                            hashicorp::nomad::plugins::base::proto::PluginInfoResponse*) override;
    grpc::Status ConfigSchema(grpc::ServerContext*, const hashicorp::nomad::plugins::base::proto::ConfigSchemaRequest*,
                              hashicorp::nomad::plugins::base::proto::ConfigSchemaResponse*) override;
    grpc::Status SetConfig(grpc::ServerContext*, const hashicorp::nomad::plugins::base::proto::SetConfigRequest*,
                           hashicorp::nomad::plugins::base::proto::SetConfigResponse*) override;

private:
    PluginState& state_;
};

/// go-plugin's Client.Kill calls Shutdown and waits up to 2 s for the
/// process to exit before it kills it (go-plugin client.go Kill,
/// grpc_client.go Close).
class ControllerService final : public plugin::GRPCController::Service {
public:
    explicit ControllerService(PluginState& state) : state_(state) {}
    grpc::Status Shutdown(grpc::ServerContext*, const plugin::Empty*, plugin::Empty*) override;

private:
    PluginState& state_;
};

/// go-plugin's client opens the broker's stream as soon as it connects and
/// keeps it for the connection's life (go-plugin grpc_client.go
/// newGRPCClient, grpc_broker.go). The driver offers and dials no brokered
/// servers (Nomad's driver API uses none): the stream stays open until the
/// client closes it or the plugin shuts down, a knock (a multiplexed dial)
/// is answered with a refusal, any other announcement is ignored.
class BrokerService final : public plugin::GRPCBroker::Service {
public:
    explicit BrokerService(PluginState& state) : state_(state) {}
    grpc::Status StartStream(grpc::ServerContext*,
                             grpc::ServerReaderWriter<plugin::ConnInfo, plugin::ConnInfo>* stream) override;

private:
    PluginState& state_;
};

/// go-plugin's client (v1.2 and later) opens StreamStdio once as soon as it
/// connects, to mirror the plugin's stdout and stderr to its SyncStdout and
/// SyncStderr (go-plugin grpc_stdio.go). The driver writes nothing there:
/// stdout is /dev/null after the handshake, and its stderr is go-plugin's
/// log channel, which the client reads from the process's pipe. The stream
/// stays open, empty, until the client cancels it or the plugin shuts down
/// (then it ends cleanly, which the client takes as EOF).
class StdioService final : public plugin::GRPCStdio::Service {
public:
    explicit StdioService(PluginState& state) : state_(state) {}
    grpc::Status StreamStdio(grpc::ServerContext*, const google::protobuf::Empty*,
                             grpc::ServerWriter<plugin::StdioData>*) override;

private:
    PluginState& state_;
};

class DriverService final
    : public hashicorp::nomad::plugins::drivers::proto::Driver::WithCallbackMethod_ExecTaskStreaming<
          hashicorp::nomad::plugins::drivers::proto::Driver::Service> {
public:
    explicit DriverService(PluginState& state) : state_(state) {}

    using Ctx = grpc::ServerContext;
    grpc::Status Init(Ctx*, const hashicorp::nomad::plugins::drivers::proto::InitRequest*,
                      hashicorp::nomad::plugins::drivers::proto::InitResponse*) override;
    grpc::Status Shutdown(Ctx*, const hashicorp::nomad::plugins::drivers::proto::ShutdownRequest*,
                          hashicorp::nomad::plugins::drivers::proto::ShutdownResponse*) override;
    grpc::Status TaskConfigSchema(Ctx*, const hashicorp::nomad::plugins::drivers::proto::TaskConfigSchemaRequest*,
                                  hashicorp::nomad::plugins::drivers::proto::TaskConfigSchemaResponse*) override;
    grpc::Status Capabilities(Ctx*, const hashicorp::nomad::plugins::drivers::proto::CapabilitiesRequest*,
                              hashicorp::nomad::plugins::drivers::proto::CapabilitiesResponse*) override;
    grpc::Status Fingerprint(
        Ctx*, const hashicorp::nomad::plugins::drivers::proto::FingerprintRequest*,
        grpc::ServerWriter<hashicorp::nomad::plugins::drivers::proto::FingerprintResponse>*) override;
    grpc::Status RecoverTask(Ctx*, const hashicorp::nomad::plugins::drivers::proto::RecoverTaskRequest*,
                             hashicorp::nomad::plugins::drivers::proto::RecoverTaskResponse*) override;
    grpc::Status StartTask(Ctx*, const hashicorp::nomad::plugins::drivers::proto::StartTaskRequest*,
                           hashicorp::nomad::plugins::drivers::proto::StartTaskResponse*) override;
    grpc::Status WaitTask(Ctx*, const hashicorp::nomad::plugins::drivers::proto::WaitTaskRequest*,
                          hashicorp::nomad::plugins::drivers::proto::WaitTaskResponse*) override;
    grpc::Status StopTask(Ctx*, const hashicorp::nomad::plugins::drivers::proto::StopTaskRequest*,
                          hashicorp::nomad::plugins::drivers::proto::StopTaskResponse*) override;
    grpc::Status DestroyTask(Ctx*, const hashicorp::nomad::plugins::drivers::proto::DestroyTaskRequest*,
                             hashicorp::nomad::plugins::drivers::proto::DestroyTaskResponse*) override;
    grpc::Status InspectTask(Ctx*, const hashicorp::nomad::plugins::drivers::proto::InspectTaskRequest*,
                             hashicorp::nomad::plugins::drivers::proto::InspectTaskResponse*) override;
    grpc::Status TaskStats(Ctx*, const hashicorp::nomad::plugins::drivers::proto::TaskStatsRequest*,
                           grpc::ServerWriter<hashicorp::nomad::plugins::drivers::proto::TaskStatsResponse>*) override;
    grpc::Status TaskEvents(Ctx*, const hashicorp::nomad::plugins::drivers::proto::TaskEventsRequest*,
                            grpc::ServerWriter<hashicorp::nomad::plugins::drivers::proto::DriverTaskEvent>*) override;
    grpc::Status SignalTask(Ctx*, const hashicorp::nomad::plugins::drivers::proto::SignalTaskRequest*,
                            hashicorp::nomad::plugins::drivers::proto::SignalTaskResponse*) override;
    grpc::Status ExecTask(Ctx*, const hashicorp::nomad::plugins::drivers::proto::ExecTaskRequest*,
                          hashicorp::nomad::plugins::drivers::proto::ExecTaskResponse*) override;
    grpc::Status CreateNetwork(Ctx*, const hashicorp::nomad::plugins::drivers::proto::CreateNetworkRequest*,
                               hashicorp::nomad::plugins::drivers::proto::CreateNetworkResponse*) override;
    grpc::Status DestroyNetwork(Ctx*, const hashicorp::nomad::plugins::drivers::proto::DestroyNetworkRequest*,
                                hashicorp::nomad::plugins::drivers::proto::DestroyNetworkResponse*) override;
    /// A callback method (exec_stream.hpp says why).
    grpc::ServerBidiReactor<hashicorp::nomad::plugins::drivers::proto::ExecTaskStreamingRequest,
                            hashicorp::nomad::plugins::drivers::proto::ExecTaskStreamingResponse>*
    ExecTaskStreaming(grpc::CallbackServerContext*) override;

private:
    /// Kills (if it runs) and forgets the manager's task of `key`, which no
    /// task ID of Nomad's holds; returns the state it was in.
    common::Result<std::string> replaceLeftover(Client& c, const TaskKey& key);
    PluginState& state_;
};

}  // namespace taskscope::nomad
