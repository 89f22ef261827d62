// taskscope-test-csi-plugin: a CSI plugin for the system tier. Serves the
// CSI Identity service on the unix socket CSI_ENDPOINT names (as Nomad and
// taskscope set it), with the provider name and version given on the
// command line. SIGUSR1 flips its readiness (Probe's answer); SIGTERM ends it.
//
//   taskscope-test-csi-plugin PROVIDER VERSION

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "csi_identity.grpc.pb.h"

namespace {

std::atomic<bool> g_ready{true};
std::atomic<bool> g_stop{false};

void onSignal(int sig) {
    if (sig == SIGUSR1)
        g_ready.store(!g_ready.load());
    else
        g_stop.store(true);
}

class Identity final : public csi::v1::Identity::Service {
public:
    Identity(std::string provider, std::string version) : provider_(std::move(provider)), version_(std::move(version)) {}

    grpc::Status GetPluginInfo(grpc::ServerContext*, const csi::v1::GetPluginInfoRequest*,
                               csi::v1::GetPluginInfoResponse* reply) override {
        reply->set_name(provider_);
        reply->set_vendor_version(version_);
        (*reply->mutable_manifest())["test"] = "taskscope";
        return grpc::Status::OK;
    }
    grpc::Status GetPluginCapabilities(grpc::ServerContext*, const csi::v1::GetPluginCapabilitiesRequest*,
                                       csi::v1::GetPluginCapabilitiesResponse* reply) override {
        reply->add_capabilities()->mutable_service()->set_type(
            csi::v1::PluginCapability_Service_Type_CONTROLLER_SERVICE);
        reply->add_capabilities()->mutable_volume_expansion()->set_type(
            csi::v1::PluginCapability_VolumeExpansion_Type_ONLINE);
        return grpc::Status::OK;
    }
    grpc::Status Probe(grpc::ServerContext*, const csi::v1::ProbeRequest*, csi::v1::ProbeResponse* reply) override {
        reply->mutable_ready()->set_value(g_ready.load());
        return grpc::Status::OK;
    }

private:
    std::string provider_;
    std::string version_;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s PROVIDER VERSION (listens on $CSI_ENDPOINT)\n", argv[0]);
        return 2;
    }
    const char* endpoint = std::getenv("CSI_ENDPOINT");
    if (!endpoint || std::strncmp(endpoint, "unix://", 7) != 0) {
        std::fprintf(stderr, "CSI_ENDPOINT must be unix://PATH\n");
        return 2;
    }
    const std::string socket = endpoint + 7;
    ::unlink(socket.c_str());
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigaction(SIGUSR1, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);

    Identity service(argv[1], argv[2]);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
    builder.RegisterService(&service);
    auto server = builder.BuildAndStart();
    if (!server) {
        std::fprintf(stderr, "cannot listen on %s\n", socket.c_str());
        return 1;
    }
    std::printf("serving CSI Identity as %s %s on %s\n", argv[1], argv[2], socket.c_str());
    std::fflush(stdout);
    while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    server->Shutdown();
    return 0;
}
