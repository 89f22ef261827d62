#include "stream/daemon/streamer_adaptor.hpp"

#include "common/bus_error.hpp"
#include "common/error_names.hpp"
#include "common/sdbus_compat.hpp"

namespace taskscope::stream::daemon {

StreamerObject::StreamerObject(sdbus::IConnection& connection, logs::Streamer& streamer, ManagerClient& manager,
                               std::string version)
    : AdaptorInterfaces(connection, sdbus::ObjectPath{kStreamerPath}),
      streamer_(streamer),
      manager_(manager),
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
    sdbus_compat::emitPropertiesChanged(getObject(), org::taskscope::Streamer1_adaptor::INTERFACE_NAME, {"Tasks"});
}

std::tuple<bool, uint64_t, uint64_t, uint64_t> StreamerObject::GetJournalCopy(const std::string& allocId,
                                                                               const std::string& task) {
    const auto state = common::unwrapForBus(streamer_.journalState(allocId, task));
    return {state.enabled, state.counts.bytesSent, state.counts.linesDropped, state.counts.bytesDropped};
}

void StreamerObject::ReadLogs(sdbus::Result<sdbus::UnixFd>&& result, std::string allocId, std::string task,
                              std::string stream, std::string origin, int64_t offset, bool follow) {
    auto fd = streamer_.readLogs(allocId, task, stream, origin, offset, follow);
    if (fd) {
        // UnixFd keeps a duplicate; ours closes when fd goes out of scope.
        result.returnResults(sdbus::UnixFd(fd->get()));
        return;
    }
    const auto error = common::toBusError(fd.error());
    if (fd.error().name != common::errors::kNoSuchTask) {
        result.returnError(error);
        return;
    }
    // Only the manager knows a task whose logs are off (it creates no spool
    // entry for one, so we cannot tell that from "no such task"); the reply
    // waits for it, and any failure to ask keeps our NoSuchTask.
    auto pending = std::make_shared<sdbus::Result<sdbus::UnixFd>>(std::move(result));
    manager_.getTask(allocId, task, [pending, error, allocId, task](common::Result<wire::TaskInfo> t) {
        if (!t || !t->spec || t->spec->logs) return pending->returnError(error);
        pending->returnError(common::toBusError(common::makeError(
            "LogsDisabled",
            "task '" + task + "' of allocation '" + allocId + "' runs with log collection off (\"logs\": false)")));
    });
}

}  // namespace taskscope::stream::daemon
