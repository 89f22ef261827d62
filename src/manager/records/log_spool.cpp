// A task's fifos and description made in the streamer's spool, and
// removed (log_spool.hpp).
#include "manager/records/log_spool.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "common/fd_store.hpp"
#include "common/files.hpp"

namespace taskscope::manager {

common::Result<void> LogSpool::prepareDir() const {
    // The streamer may have created it first, readable by everyone.
    if (auto r = common::makePrivateDir(dir_); !r) return r;
    return common::restrictFiles(dir_);
}

common::Result<void> LogSpool::add(const std::string& unit, const std::string& allocId, const std::string& task,
                                   const LogSettings& s) const {
    // A shim of an earlier run still holding the old fifos would wait
    // forever on a release fifo that is about to be replaced.
    (void)common::pokeFifo(releaseFifo(unit));
    // No one holds them until the shim opens them, before it forks the task:
    // until then nothing is written, so nothing can be lost.
    for (const auto& fifo : {stdoutFifo(unit), stderrFifo(unit), releaseFifo(unit)}) {
        ::unlink(fifo.c_str());
        if (::mkfifo(fifo.c_str(), 0600) < 0) {
            const int err = errno;
            remove(unit);
            return common::errnoError("mkfifo " + fifo, err);
        }
    }
    const wire::SpoolDescription d{allocId, task, s.logDir, s.maxFiles, s.maxFileSizeMb, false};
    if (auto r = common::writeFileAtomic(description(unit), wire::describe(d)); !r) {
        remove(unit);
        return r.error();
    }
    return {};
}

void LogSpool::release(const std::string& unit) const {
    common::unstoreFd(wire::spoolName(unit, wire::kSpoolStdout));
    common::unstoreFd(wire::spoolName(unit, wire::kSpoolStderr));
}

std::optional<LogSpool::Hold> LogSpool::readopt(const std::string& unit,
                                                 std::map<std::string, common::UniqueFd>& stored) const {
    auto take = [&](const std::string& name) {
        common::UniqueFd fd;
        if (auto it = stored.find(name); it != stored.end()) {
            fd = std::move(it->second);
            stored.erase(it);
        }
        return fd;
    };
    Hold hold{take(wire::spoolName(unit, wire::kSpoolStdout)), take(wire::spoolName(unit, wire::kSpoolStderr))};
    if (!hold.first && !hold.second) return std::nullopt;  // the task's shim holds its fifos
    if (::access(description(unit).c_str(), F_OK) != 0) {
        release(unit);
        return std::nullopt;
    }
    return hold;
}

void LogSpool::markExited(const std::string& unit) const {
    auto text = common::readFile(description(unit));
    if (!text) return;  // the streamer already finished with it, or logs were off
    auto marked = wire::markedExited(*text);
    if (!marked) return;
    (void)common::writeFileAtomic(description(unit), *marked);
}

void LogSpool::remove(const std::string& unit) const {
    (void)common::pokeFifo(releaseFifo(unit));
    for (const auto& fifo : {stdoutFifo(unit), stderrFifo(unit), releaseFifo(unit)}) ::unlink(fifo.c_str());
    ::unlink(description(unit).c_str());
}

}  // namespace taskscope::manager
