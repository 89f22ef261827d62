#include "stream/daemon/streamer_adaptor.hpp"

namespace taskscope::stream::daemon {

namespace {
constexpr const char* kErrorPrefix = "org.taskscope.Error.";
}  // namespace

StreamerObject::StreamerObject(sdbus::IConnection& connection, logs::Streamer& streamer, std::string version)
    : AdaptorInterfaces(connection, kStreamerPath),
      streamer_(streamer),
      manager_(connection),
      version_(std::move(version)) {
    registerAdaptor();
}

StreamerObject::~StreamerObject() {
    unregisterAdaptor();
}

void StreamerObject::logsComplete(const std::string& allocId, const std::string& task) {
    emitLogsComplete(allocId, task);
}

void StreamerObject::tasksChanged() {
    emitPropertiesChangedSignal(org::taskscope::Streamer1_adaptor::INTERFACE_NAME, {"Tasks"});
}

void StreamerObject::ReadLogs(sdbus::Result<sdbus::UnixFd>&& result, std::string allocId, std::string task,
                              std::string stream, std::string origin, int64_t offset, bool follow) {
    auto fd = streamer_.readLogs(allocId, task, stream, origin, offset, follow);
    if (fd) {
        // UnixFd keeps a duplicate; ours closes when fd goes out of scope.
        result.returnResults(sdbus::UnixFd(fd->get()));
        return;
    }
    const auto error = sdbus::Error(kErrorPrefix + fd.error().name, fd.error().message);
    if (fd.error().name != "NoSuchTask") {
        result.returnError(error);
        return;
    }
    // Only the manager knows a task whose logs are off; the reply waits for it.
    auto pending = std::make_shared<sdbus::Result<sdbus::UnixFd>>(std::move(result));
    manager_.logsDisabled(allocId, task, [pending, error, allocId, task](bool disabled) {
        if (!disabled) return pending->returnError(error);
        pending->returnError(sdbus::Error(
            std::string(kErrorPrefix) + "LogsDisabled",
            "task '" + task + "' of allocation '" + allocId + "' runs with log collection off (\"logs\": false)"));
    });
}

}  // namespace taskscope::stream::daemon
