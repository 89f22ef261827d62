// nomad-driver-taskscope: a Nomad task driver plugin that runs Nomad's
// tasks on taskscope. Nomad's client starts it from its plugin_dir and
// speaks go-plugin's protocol: the magic cookie in the environment, the
// handshake line on stdout, then gRPC on the announced unix socket; it
// may reattach to the same process after an agent restart.

#include <fcntl.h>
#include <pthread.h>
#include <grp.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "nomad/driver_service.hpp"
#include "nomad/plugin_facts.hpp"
#include "nomad/plugin_log.hpp"

namespace {

using namespace taskscope::nomad;

int refuse() {
    // go-plugin's own words for this case (server.go Serve).
    std::fprintf(stderr,
                 "This binary is a plugin. These are not meant to be executed directly.\n"
                 "nomad-driver-taskscope is a Nomad task driver: put it in the Nomad client's plugin_dir,\n"
                 "name it in a plugin \"%s\" block, and Nomad starts it (with %s set to its value).\n",
                 kPluginFileName, kMagicCookieKey);
    return 1;
}

// The socket's place: in the directory go-plugin's client named
// (PLUGIN_UNIX_SOCKET_DIR), else in a private directory (0700) that only
// the client's user reaches. `ownDir` is the directory to remove at exit.
struct SocketPlace {
    std::string path;
    std::string ownDir;
};

bool placeSocket(const PluginEnv& env, SocketPlace& out) {
    if (!env.socketDir.empty()) {
        // go-plugin makes a unique name there (os.CreateTemp(dir, "plugin")).
        std::string name = env.socketDir + "/plugin-XXXXXX";
        const int fd = ::mkstemp(name.data());
        if (fd < 0) return false;
        ::close(fd);
        ::unlink(name.c_str());
        out.path = name;
        return true;
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/nomad-driver-taskscope-XXXXXX";
    if (!::mkdtemp(dir.data())) return false;
    out.ownDir = dir;
    out.path = dir + "/plugin.sock";
    return true;
}

// PLUGIN_UNIX_SOCKET_GROUP: the group (a name or a gid) owns the socket,
// which it may write (go-plugin server.go setGroupWritable, 0660); a
// private directory of ours lets it through (0710).
bool shareWithGroup(const std::string& group, const SocketPlace& place) {
    char* end = nullptr;
    gid_t gid = static_cast<gid_t>(std::strtoul(group.c_str(), &end, 10));
    if (group.empty() || *end != '\0') {
        const struct group* g = ::getgrnam(group.c_str());
        if (!g) return false;
        gid = g->gr_gid;
    }
    if (::chown(place.path.c_str(), static_cast<uid_t>(-1), gid) != 0 || ::chmod(place.path.c_str(), 0660) != 0)
        return false;
    if (!place.ownDir.empty() &&
        (::chown(place.ownDir.c_str(), static_cast<uid_t>(-1), gid) != 0 || ::chmod(place.ownDir.c_str(), 0710) != 0))
        return false;
    return true;
}

void cleanup(const SocketPlace& place) {
    ::unlink(place.path.c_str());
    if (!place.ownDir.empty()) ::rmdir(place.ownDir.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && (std::strcmp(argv[1], "--version") == 0)) {
        std::printf("nomad-driver-taskscope %s\n", TASKSCOPE_VERSION);
        return 0;
    }
    const char* cookie = std::getenv(kMagicCookieKey);
    if (!cookie || std::strcmp(cookie, kMagicCookieValue) != 0) return refuse();

    // The plugin outlives its agent: Nomad's client restarts and
    // reattaches to the running plugin, and stops it in order (Driver and
    // controller Shutdown) when it means to. So: a vanished reader of
    // stdout or stderr does not kill it (SIGPIPE), and neither does the
    // SIGINT that a terminal sends to the agent's whole process group
    // (go-plugin's own servers ignore it too: server.go Serve, "plugin
    // received interrupt signal, ignoring"). SIGTERM ends it as Shutdown does.
    ::signal(SIGPIPE, SIG_IGN);
    ::signal(SIGINT, SIG_IGN);
    // SIGTERM is taken by one thread with sigwait: blocked before gRPC
    // starts its threads, which inherit the mask.
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    prepareLogChannel();

    const PluginEnv env = pluginEnvFromProcess();
    if (env.autoMtlsAsked) {
        std::fprintf(stderr,
                     "nomad-driver-taskscope: the client asks for AutoMTLS (PLUGIN_CLIENT_CERT), which this plugin "
                     "does not serve: it listens on a unix socket that only its user reaches. Nomad does not ask "
                     "for it; configure the client without AutoMTLS.\n");
        return 1;
    }
    if (!clientAcceptsAppVersion(env.protocolVersions))
        logRecord("warn", "the client does not accept this plugin's protocol version",
                  {{"client_versions", env.protocolVersions}, {"plugin_version", std::to_string(kAppProtocolVersion)}});

    SocketPlace place;
    if (!placeSocket(env, place)) {
        std::fprintf(stderr, "nomad-driver-taskscope: cannot make a place for the socket: %s\n", std::strerror(errno));
        return 1;
    }

    PluginState state;
    BaseService base(state);
    DriverService driver(state);
    ControllerService controller(state);
    BrokerService broker(state);
    StdioService stdio(state);
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + place.path, grpc::InsecureServerCredentials());
    builder.RegisterService(&base);
    builder.RegisterService(&driver);
    builder.RegisterService(&controller);
    builder.RegisterService(&broker);
    builder.RegisterService(&stdio);
    auto server = builder.BuildAndStart();
    if (!server) {
        std::fprintf(stderr, "nomad-driver-taskscope: cannot listen on %s\n", place.path.c_str());
        cleanup(place);
        return 1;
    }
    if (!env.socketGroup.empty() && !shareWithGroup(env.socketGroup, place)) {
        std::fprintf(stderr, "nomad-driver-taskscope: cannot give the socket to group %s: %s\n",
                     env.socketGroup.c_str(), std::strerror(errno));
        server->Shutdown();
        cleanup(place);
        return 1;
    }
    server->GetHealthCheckService()->SetServingStatus(kHealthService, true);

    const std::string line = handshakeLine(place.path, env.multiplexAsked) + "\n";
    if (::write(1, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
        server->Shutdown();
        cleanup(place);
        return 1;
    }
    // Nothing else goes to stdout (the client reads only the handshake
    // there, and nothing once its agent is gone): /dev/null from here on.
    if (const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC); null >= 0) {
        ::dup2(null, 1);
        ::close(null);
    }
    logRecord("debug", "plugin address", {{"network", "unix"}, {"address", place.path}});

    // Until Shutdown (the controller's, on go-plugin's Kill, or the
    // driver's) or SIGTERM; open streams end with the plugin-shutdown error.
    std::thread signals([&] {
        int sig = 0;
        sigwait(&sigs, &sig);
        state.shutdown();
    });
    signals.detach();
    while (!state.waitShutdown(60 * 1000)) {
    }
    // go-plugin's Kill waits 2 s for the process to go before it kills it:
    // calls still running after 1 s (a stream's read) are cancelled.
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    cleanup(place);
    return 0;
}
