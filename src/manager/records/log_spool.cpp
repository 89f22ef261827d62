// A task's fifos and description made in the streamer's spool, and
// removed (log_spool.hpp).
#include "manager/records/log_spool.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error_names.hpp"
#include "common/fd_store.hpp"
#include "common/files.hpp"

namespace taskscope::manager {

common::Result<void> journalSocketReady(const std::string& path) {
    struct stat st {};
    const int err = ::stat(path.c_str(), &st) < 0 ? errno : 0;
    if (!err && S_ISSOCK(st.st_mode)) return {};
    const std::string why = err ? std::strerror(err) : "not a socket";
    return common::makeError(common::errors::kJournalUnavailable,
                             "the task's output is to be copied to the journal (log_journal), and journald's "
                             "stream socket " + path + " is not there (" + why +
                                 "): start systemd-journald, or turn log_journal off");
}

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
    wire::SpoolDescription d;
    d.allocId = allocId;
    d.task = task;
    d.logDir = s.logDir;
    d.maxFiles = s.maxFiles;
    d.maxFileSizeMb = s.maxFileSizeMb;
    d.journal = s.journal;
    d.forward = s.forward;
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

void LogSpool::setTaskPid(const std::string& unit, int64_t pid) const {
    auto text = common::readFile(description(unit));
    if (!text) return;  // the streamer already finished with it
    auto with = wire::withTaskPid(*text, pid);
    if (!with) return;
    // Written from the loop, at every such start: no fsync, since the
    // spool (/run) and the task both end with the boot.
    (void)common::writeFileAtomic(description(unit), *with, common::kPrivateFileMode, common::Durability::ProcessCrash);
}

void LogSpool::fillTaskPid(const std::string& unit, int64_t pid) const {
    auto text = common::readFile(description(unit));
    if (!text) return;
    auto d = wire::parseSpoolDescription(*text);
    if (!d || !d->journal || d->taskPid != 0) return;
    setTaskPid(unit, pid);
}

void LogSpool::remove(const std::string& unit) const {
    (void)common::pokeFifo(releaseFifo(unit));
    for (const auto& fifo : {stdoutFifo(unit), stderrFifo(unit), releaseFifo(unit)}) ::unlink(fifo.c_str());
    ::unlink(description(unit).c_str());
}

}  // namespace taskscope::manager
