#include "stream/daemon/exec_adaptor.hpp"

#include <memory>

#include <spdlog/spdlog.h>

#include "common/bus_error.hpp"
#include "common/sdbus_compat.hpp"
#include "stream/daemon/streamer_adaptor.hpp"

namespace taskscope::stream::daemon {

namespace {

sdbus::Error toBus(const common::Error& e) { return common::toBusError(e); }

}  // namespace

ExecObject::ExecObject(sdbus::IConnection& connection, exec::ExecService& service)
    : AdaptorInterfaces(connection, sdbus::ObjectPath{kStreamerPath}), service_(service) {
    registerAdaptor();
}

ExecObject::~ExecObject() {
    unregisterAdaptor();
}

std::string ExecObject::sender() const {
    std::string sender;
    sdbus_compat::withCurrentMessage(getObject(), [&](const sdbus::Message& m) { sender = sdbus_compat::senderOf(m); });
    return sender;
}

void ExecObject::execExited(uint64_t session, const std::string& allocId, const std::string& task,
                            const exec::ExecResult& result) {
    emitExecExited(session, allocId, task, result.exitCode, result.signal);
}

void ExecObject::sessionsChanged() {
    sdbus_compat::emitPropertiesChanged(getObject(), org::taskscope::Exec1_adaptor::INTERFACE_NAME, {"Sessions"});
}

std::vector<sdbus::Struct<uint64_t, std::string, std::string, bool>> ExecObject::Sessions() {
    std::vector<sdbus::Struct<uint64_t, std::string, std::string, bool>> out;
    for (const auto& s : service_.runningSessions()) out.emplace_back(s.session, s.allocId, s.task, s.tty);
    return out;
}

void ExecObject::StartExec(sdbus::Result<uint64_t, std::vector<sdbus::UnixFd>>&& result, std::string allocId,
                           std::string task, std::vector<std::string> command, std::map<std::string, std::string> env,
                           bool tty, uint16_t rows, uint16_t cols) {
    exec::ExecRequest req{
        std::move(allocId), std::move(task), std::move(command), std::move(env), tty, rows, cols, sender()};
    auto reply = std::make_shared<sdbus::Result<uint64_t, std::vector<sdbus::UnixFd>>>(std::move(result));
    service_.start(std::move(req), [reply](common::Result<exec::ExecStarted> started) {
        if (!started) return reply->returnError(toBus(started.error()));
        // UnixFd duplicates; ours close when `started` goes.
        std::vector<sdbus::UnixFd> fds;
        for (const auto& fd : started->fds) fds.emplace_back(fd.get());
        reply->returnResults(started->session, fds);
    });
}

void ExecObject::ResizeExec(const uint64_t& session, const uint16_t& rows, const uint16_t& cols) {
    if (auto r = service_.resize(session, rows, cols); !r) throw toBus(r.error());
}

void ExecObject::WaitExec(sdbus::Result<int32_t, int32_t>&& result, uint64_t session) {
    auto reply = std::make_shared<sdbus::Result<int32_t, int32_t>>(std::move(result));
    service_.wait(session, [reply](common::Result<exec::ExecResult> r) {
        if (!r) return reply->returnError(toBus(r.error()));
        reply->returnResults(r->exitCode, r->signal);
    });
}

void ExecObject::ExecOnce(sdbus::Result<int32_t, int32_t, std::vector<uint8_t>, bool>&& result, std::string allocId,
                          std::string task, std::vector<std::string> command, std::map<std::string, std::string> env,
                          uint32_t timeoutMs, uint32_t maxOutput) {
    exec::ExecRequest req{
        std::move(allocId), std::move(task), std::move(command), std::move(env), false, 0, 0, sender()};
    auto reply = std::make_shared<sdbus::Result<int32_t, int32_t, std::vector<uint8_t>, bool>>(std::move(result));
    service_.once(std::move(req), timeoutMs, maxOutput, [reply](common::Result<exec::OnceResult> r) {
        if (!r) return reply->returnError(toBus(r.error()));
        reply->returnResults(r->result.exitCode, r->result.signal, r->output, r->truncated);
    });
}

ExecServer::ExecServer(common::EventLoop& loop, sdbus::IConnection& connection, ManagerClient& manager,
                       exec::ExecServiceOptions options)
    : connection_(connection),
      scopes_(connection),
      service_(loop, manager, scopes_, std::move(options)),
      object_(connection, service_),
      clients_(connection, [this](const std::string& name) { service_.clientGone(name); }) {
    service_.attach(object_);
}

void ExecServer::restore(std::map<std::string, common::UniqueFd> stored) {
    // Once, at start, before the name is taken: a blocking call to the bus
    // daemon is fine here. A caller that leaves after its answer is seen
    // by clients_, which is already listening.
    auto bus = sdbus::createProxy(connection_, sdbus_compat::ServiceName{"org.freedesktop.DBus"},
                                  sdbus::ObjectPath{"/org/freedesktop/DBus"});
    for (const auto& owner : service_.restore(std::move(stored))) {
        bool present = false;
        try {
            bus->callMethod("NameHasOwner").onInterface("org.freedesktop.DBus").withArguments(owner).storeResultsTo(present);
        } catch (const sdbus::Error& e) {
            spdlog::warn("Cannot ask whether {} is still on the bus: {}", owner, e.getMessage());
            present = true;  // keep its sessions: hanging up needs a reason
        }
        if (!present) service_.clientGone(owner);
    }
}

}  // namespace taskscope::stream::daemon
