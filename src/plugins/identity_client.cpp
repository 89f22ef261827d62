#include "plugins/identity_client.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <grpcpp/grpcpp.h>

#include "common/safe_path.hpp"

#include "csi_identity.grpc.pb.h"
#include "common/error_names.hpp"

namespace taskscope::plugins {

using common::makeError;
using common::Result;

namespace {

common::Error callError(const char* call, const grpc::Status& status) {
    // A socket nobody listens on is not the plugin's error: it is not up.
    const bool unreachable =
        status.error_code() == grpc::StatusCode::UNAVAILABLE || status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
    return makeError(unreachable ? "PluginUnreachable" : "PluginFailed",
                     std::string(call) + ": " + status.error_message() + " (gRPC code " +
                         std::to_string(static_cast<int>(status.error_code())) + ")");
}

}  // namespace

Result<IdentityAnswer> queryIdentity(const std::string& socketPath, bool withInfo, std::chrono::milliseconds deadline) {
    // The plugin's task can write its socket directory: the manager (root)
    // connects to the socket found there, opened with no symlink followed
    // and checked to be a socket, through its fd (issue 32), never to where
    // a link in its place would lead (another daemon's socket).
    auto socket = common::openNoSymlinks(socketPath, O_PATH);
    if (!socket) return makeError("PluginUnreachable", socket.error().message);
    struct stat st {};
    if (::fstat(socket->get(), &st) < 0 || !S_ISSOCK(st.st_mode))
        return makeError("PluginUnreachable", socketPath + " is not a socket");
    grpc::ChannelArguments args;
    // The registry's heartbeat is the retry: a channel per round, no backoff state kept.
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    auto channel =
        grpc::CreateCustomChannel("unix:" + common::fdPath(socket->get()), grpc::InsecureChannelCredentials(), args);
    auto stub = csi::v1::Identity::NewStub(channel);
    auto context = [deadline] {
        auto c = std::make_unique<grpc::ClientContext>();
        c->set_deadline(std::chrono::system_clock::now() + deadline);
        return c;
    };

    IdentityAnswer answer;
    {
        csi::v1::ProbeResponse reply;
        auto ctx = context();
        auto status = stub->Probe(ctx.get(), csi::v1::ProbeRequest{}, &reply);
        if (!status.ok()) return callError("Probe", status);
        takeProbe(reply, answer);
    }
    if (!withInfo) return answer;
    {
        csi::v1::GetPluginInfoResponse reply;
        auto ctx = context();
        auto status = stub->GetPluginInfo(ctx.get(), csi::v1::GetPluginInfoRequest{}, &reply);
        if (!status.ok()) return callError("GetPluginInfo", status);
        if (auto r = takePluginInfo(reply, answer); !r) return r.error();
    }
    {
        csi::v1::GetPluginCapabilitiesResponse reply;
        auto ctx = context();
        auto status = stub->GetPluginCapabilities(ctx.get(), csi::v1::GetPluginCapabilitiesRequest{}, &reply);
        if (!status.ok()) return callError("GetPluginCapabilities", status);
        takeCapabilities(reply, answer);
    }
    answer.haveInfo = true;
    return answer;
}

}  // namespace taskscope::plugins
