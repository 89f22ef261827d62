#include "manager/log_spool.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/fd_store.hpp"
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
    store(unit, hold);
    return hold;
}

void LogSpool::store(const std::string& unit, const Hold& hold) const {
    // Without a service manager (tests) these are no-ops; a failure only
    // costs the promise across a crash, so it is said, not fatal.
    for (auto [fd, name] : {std::pair{hold.first.get(), unit + ".stdout"}, std::pair{hold.second.get(), unit + ".stderr"}})
        if (auto r = common::storeFd(fd, name); !r)
            spdlog::warn("The hold on {} stays out of the fd store: {}", name, r.error().message);
}

void LogSpool::release(const std::string& unit) const {
    common::unstoreFd(unit + ".stdout");
    common::unstoreFd(unit + ".stderr");
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
    Hold hold{take(unit + ".stdout"), take(unit + ".stderr")};
    if (::access(description(unit).c_str(), F_OK) != 0) {
        if (hold.first || hold.second) release(unit);
        return std::nullopt;
    }
    bool reopened = false;
    for (auto [fd, fifo] : {std::pair{&hold.first, stdoutFifo(unit)}, std::pair{&hold.second, stderrFifo(unit)}}) {
        if (*fd) continue;
        // Held by no one while we were away (an older manager kept no
        // copies): what is in it now was kept by the writer's own end.
        fd->reset(::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
        reopened = reopened || static_cast<bool>(*fd);
    }
    if (reopened) store(unit, hold);
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
    release(unit);
    ::unlink(description(unit).c_str());
    ::unlink(stdoutFifo(unit).c_str());
    ::unlink(stderrFifo(unit).c_str());
}

}  // namespace taskscope::manager
