#include "common/durable_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "common/files.hpp"

namespace taskscope::common {

namespace {

std::string dirOf(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

DurableWriter::DurableWriter(EventLoop& loop) : worker_(loop, 1) {}

DurableWriter::~DurableWriter() { flush(); }

void DurableWriter::write(std::string path, std::string content, unsigned mode, Done done, Priority priority) {
    Op op;
    op.path = std::move(path);
    op.content = std::move(content);
    op.mode = mode;
    op.done = std::move(done);
    enqueue(std::move(op), priority);
}

void DurableWriter::remove(std::string path, Done done) {
    Op op;
    op.path = std::move(path);
    op.remove = true;
    op.done = std::move(done);
    enqueue(std::move(op));
}

void DurableWriter::enqueue(Op op, Priority priority) {
    if (priority == Priority::First) {
        // What waits for the same path goes first too, before it: the
        // last operation asked on a path is the one that stays.
        for (auto it = queue_.begin(); it != queue_.end();)
            if (it->path == op.path) {
                first_.push_back(std::move(*it));
                it = queue_.erase(it);
            } else {
                ++it;
            }
        first_.push_back(std::move(op));
    } else {
        queue_.push_back(std::move(op));
    }
    startRound();
}

void DurableWriter::startRound() {
    if (busy_ || (queue_.empty() && first_.empty())) return;
    busy_ = true;
    auto round = std::make_shared<std::vector<Op>>(std::move(first_));
    first_.clear();
    const size_t cap = round->empty() ? kRoundCap : round->size() + kFirstRoundExtra;
    while (!queue_.empty() && round->size() < cap) {
        round->push_back(std::move(queue_.front()));
        queue_.pop_front();
    }
    worker_.submit([this, round, alive = std::weak_ptr<int>(lifetime_)]() -> std::function<void()> {
        applyRound(*round);
        return [this, round, alive] {
            if (alive.expired()) return;
            busy_ = false;
            // What was asked meanwhile goes in the next round (up to the
            // cap), before these completions can ask more.
            startRound();
            for (auto& op : *round)
                if (op.done) op.done(std::move(op.result));
        };
    });
}

void DurableWriter::flush() {
    // The round under way first, then what waits, here on this thread.
    worker_.waitIdle();
    std::vector<Op> rest;
    rest.swap(first_);
    for (auto& op : queue_) rest.push_back(std::move(op));
    queue_.clear();
    if (rest.empty()) return;
    applyRound(rest);
}

void DurableWriter::applyRound(std::vector<Op>& round) {
    // The last operation on a path is the one that counts.
    std::map<std::string, size_t> last;
    for (size_t i = 0; i < round.size(); ++i) last[round[i].path] = i;

    // 1. Every temporary file written; one descriptor kept per filesystem.
    std::map<dev_t, UniqueFd> filesystems;
    std::vector<size_t> renames;
    for (const auto& [path, i] : last) {
        auto& op = round[i];
        if (op.remove) continue;
        const std::string tmp = path + ".tmp";
        // A tmp file left by a crash keeps its old mode through O_TRUNC.
        ::unlink(tmp.c_str());
        UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, op.mode));
        if (!fd) {
            op.result = errnoError("create " + tmp, errno);
            continue;
        }
        if (auto r = writeAll(fd.get(), op.content, tmp); !r) {
            op.result = r.error();
            ::unlink(tmp.c_str());
            continue;
        }
        struct stat st {};
        if (::fstat(fd.get(), &st) == 0 && !filesystems.count(st.st_dev)) filesystems[st.st_dev] = std::move(fd);
        renames.push_back(i);
    }
    // 2. Their contents on disk before any of them replaces its file: one
    //    commit for the round, not one per file.
    auto syncAll = [&](const char* what) -> Result<void> {
        for (auto& [dev, fd] : filesystems)
            if (::syncfs(fd.get()) < 0) return errnoError(what, errno);
        return {};
    };
    if (auto r = syncAll("syncfs before rename"); !r)
        for (auto i : renames) round[i].result = r.error();
    // 3. Renames and removals, then one more commit for the directories.
    std::map<std::string, UniqueFd> dirs;
    for (const auto& [path, i] : last) {
        auto& op = round[i];
        if (!op.result) continue;
        if (op.remove) {
            if (::unlink(path.c_str()) < 0 && errno != ENOENT) op.result = errnoError("remove " + path, errno);
        } else if (::rename((path + ".tmp").c_str(), path.c_str()) < 0) {
            op.result = errnoError("rename " + path + ".tmp", errno);
            continue;
        }
        const auto dir = dirOf(path);
        if (!dirs.count(dir)) {
            UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            struct stat st {};
            if (d && ::fstat(d.get(), &st) == 0 && !filesystems.count(st.st_dev))
                filesystems[st.st_dev] = UniqueFd(::dup(d.get()));
            dirs[dir] = std::move(d);
        }
    }
    if (auto r = syncAll("syncfs after rename"); !r)
        for (const auto& [path, i] : last)
            if (round[i].result) round[i].result = r.error();
    // Earlier operations on a path share the outcome of the last one.
    for (size_t i = 0; i < round.size(); ++i)
        if (last[round[i].path] != i) round[i].result = round[last[round[i].path]].result;
}

}  // namespace taskscope::common
