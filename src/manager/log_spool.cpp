#include "manager/log_spool.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/files.hpp"

namespace taskscope::manager {

common::Result<void> LogSpool::prepareDir() const {
    // The streamer may have created it first, readable by everyone.
    if (auto r = common::makePrivateDir(dir_); !r) return r;
    return common::restrictFiles(dir_);
}

common::Result<LogSpool::Hold> LogSpool::add(const std::string& unit, const std::string& allocId, const std::string& task,
                                   const LogSettings& s) const {
    Hold hold;
    for (auto [fifo, fd] : {std::pair{stdoutFifo(unit), &hold.first}, std::pair{stderrFifo(unit), &hold.second}}) {
        ::unlink(fifo.c_str());
        if (::mkfifo(fifo.c_str(), 0600) < 0) {
            remove(unit);
            return common::errnoError("mkfifo " + fifo, errno);
        }
        fd->reset(::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
        if (!*fd) {
            remove(unit);
            return common::errnoError("open " + fifo, errno);
        }
    }
    const nlohmann::json j = {{"alloc_id", allocId},      {"task", task},
                              {"log_dir", s.logDir},      {"max_files", s.maxFiles},
                              {"max_file_size_mb", s.maxFileSizeMb}, {"exited", false}};
    if (auto r = common::writeFileAtomic(description(unit), j.dump() + "\n"); !r) {
        remove(unit);
        return r.error();
    }
    return hold;
}

void LogSpool::markExited(const std::string& unit) const {
    auto text = common::readFile(description(unit));
    if (!text) return;  // the streamer already finished with it, or logs were off
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded()) return;
    j["exited"] = true;
    (void)common::writeFileAtomic(description(unit), j.dump() + "\n");
}

void LogSpool::remove(const std::string& unit) const {
    ::unlink(description(unit).c_str());
    ::unlink(stdoutFifo(unit).c_str());
    ::unlink(stderrFifo(unit).c_str());
}

}  // namespace taskscope::manager
