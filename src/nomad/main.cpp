// nomad-driver-taskscope: a Nomad task driver plugin that runs Nomad's
// tasks on taskscope. Nomad starts it from its plugin_dir and speaks
// go-plugin's protocol: the magic cookie in the environment, the handshake
// line on stdout, then gRPC on the announced unix socket.

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "nomad/driver_service.hpp"
#include "nomad/plugin_facts.hpp"

namespace {

using namespace taskscope::nomad;

int refuse() {
    std::fprintf(stderr,
                 "This binary is a plugin. These are not meant to be executed directly.\n"
                 "nomad-driver-taskscope is a Nomad task driver: put it in the Nomad client's plugin_dir\n"
                 "and Nomad starts it (with %s set to its value).\n",
                 kMagicCookieKey);
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && (std::strcmp(argv[1], "--version") == 0)) {
        std::printf("nomad-driver-taskscope %s\n", TASKSCOPE_VERSION);
        return 0;
    }
    const char* cookie = std::getenv(kMagicCookieKey);
    if (!cookie || std::strcmp(cookie, kMagicCookieValue) != 0) return refuse();
    // Nomad reads our stdout only for the handshake; a vanished reader
    // must not kill us.
    ::signal(SIGPIPE, SIG_IGN);

    // A private directory (0700) for the socket: only Nomad's user reaches it.
    char dir[] = "/tmp/nomad-driver-taskscope-XXXXXX";
    if (!::mkdtemp(dir)) {
        std::perror("nomad-driver-taskscope: mkdtemp");
        return 1;
    }
    const std::string socket = std::string(dir) + "/plugin.sock";

    PluginState state;
    BaseService base(state);
    DriverService driver(state);
    ControllerService controller(state);
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
    builder.RegisterService(&base);
    builder.RegisterService(&driver);
    builder.RegisterService(&controller);
    auto server = builder.BuildAndStart();
    if (!server) {
        std::fprintf(stderr, "nomad-driver-taskscope: cannot listen on %s\n", socket.c_str());
        ::rmdir(dir);
        return 1;
    }
    // go-plugin's health check asks for the service "plugin".
    server->GetHealthCheckService()->SetServingStatus("plugin", true);

    std::printf("%d|%d|unix|%s|grpc\n", kCoreProtocolVersion, kAppProtocolVersion, socket.c_str());
    std::fflush(stdout);

    // Until GRPCController/Shutdown (Nomad's way to end a plugin) or a
    // signal; open streams end with the plugin-shutdown error.
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    std::thread signals([&] {
        int sig = 0;
        sigwait(&sigs, &sig);
        state.shutdown();
    });
    signals.detach();
    while (!state.waitShutdown(60 * 1000)) {
    }
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    ::unlink(socket.c_str());
    ::rmdir(dir);
    return 0;
}
