#include "common/durable_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
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
    // Hurried, a start waits for this round or the next: a First write
    // goes alone, and otherwise only a few of those waiting go.
    size_t cap = kRoundCap;
    if (hurried_->load() > 0) cap = round->empty() ? kHurriedCap : round->size();
    while (!queue_.empty() && round->size() < cap) {
        round->push_back(std::move(queue_.front()));
        queue_.pop_front();
    }
    inFlight_ = round;
    worker_.submit([this, round, hurried = hurried_, alive = std::weak_ptr<int>(lifetime_)]() -> std::function<void()> {
        applyRound(*round, *hurried);
        return [this, round, alive] {
            if (alive.expired()) return;
            busy_ = false;
            inFlight_.reset();
            requeueDeferred(*round);
            // What was asked meanwhile goes in the next round (up to the
            // cap), before these completions can ask more.
            startRound();
            for (auto& op : *round)
                if (op.done && !op.deferred) op.done(std::move(op.result));
        };
    });
}

void DurableWriter::requeueDeferred(std::vector<Op>& round) {
    // Asked before anything still waiting on their paths: back at the
    // front, and into the First round where a write on the same path
    // was asked First meanwhile (it must not be undone by them).
    std::vector<Op> toFirst, toQueue;
    for (auto& op : round) {
        if (!op.deferred) continue;
        const bool urgent =
            std::any_of(first_.begin(), first_.end(), [&](const Op& f) { return f.path == op.path; });
        auto& to = urgent ? toFirst : toQueue;
        to.push_back(std::move(op));
        to.back().deferred = false;
    }
    first_.insert(first_.begin(), std::make_move_iterator(toFirst.begin()), std::make_move_iterator(toFirst.end()));
    queue_.insert(queue_.begin(), std::make_move_iterator(toQueue.begin()), std::make_move_iterator(toQueue.end()));
}

std::shared_ptr<void> DurableWriter::hurry() {
    auto count = hurried_;
    ++*count;
    return std::shared_ptr<void>(count.get(), [count](void*) { --*count; });
}

void DurableWriter::flush() {
    // The round under way first, then what it left and what waits, here
    // on this thread.
    worker_.waitIdle();
    std::vector<Op> rest;
    if (inFlight_)
        for (auto& op : *inFlight_)
            if (op.deferred) {
                rest.push_back(std::move(op));
                rest.back().deferred = false;
                op.deferred = false;  // its completion, when it runs, leaves it be
                op.done = nullptr;
            }
    for (auto& op : first_) rest.push_back(std::move(op));
    first_.clear();
    for (auto& op : queue_) rest.push_back(std::move(op));
    queue_.clear();
    if (rest.empty()) return;
    const std::atomic<int> unhurried{0};
    applyRound(rest, unhurried);
}

void DurableWriter::applyRound(std::vector<Op>& round, const std::atomic<int>& hurried) {
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
    // 3. Renames, then removals, then one more commit for the directories.
    std::map<std::string, UniqueFd> dirs;
    auto noteDir = [&](const std::string& path) {
        const auto dir = dirOf(path);
        if (dirs.count(dir)) return;
        UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        struct stat st {};
        if (d && ::fstat(d.get(), &st) == 0 && !filesystems.count(st.st_dev))
            filesystems[st.st_dev] = UniqueFd(::dup(d.get()));
        dirs[dir] = std::move(d);
    };
    for (const auto& [path, i] : last) {
        auto& op = round[i];
        if (op.remove || !op.result) continue;
        if (::rename((path + ".tmp").c_str(), path.c_str()) < 0) {
            op.result = errnoError("rename " + path + ".tmp", errno);
            continue;
        }
        noteDir(path);
    }
    // Each unlink holds its directory's lock while it waits for the
    // journal: a start hurrying gets the disk after a few more.
    size_t removed = 0;
    for (const auto& [path, i] : last) {
        auto& op = round[i];
        if (!op.remove) continue;
        if (removed >= kHurriedCap && hurried.load(std::memory_order_relaxed) > 0) {
            op.deferred = true;
            continue;
        }
        ++removed;
        if (::unlink(path.c_str()) < 0 && errno != ENOENT) op.result = errnoError("remove " + path, errno);
        noteDir(path);
    }
    if (auto r = syncAll("syncfs after rename"); !r)
        for (const auto& [path, i] : last)
            if (round[i].result && !round[i].deferred) round[i].result = r.error();
    // Earlier operations on a path share the outcome of the last one, or
    // wait with it.
    for (size_t i = 0; i < round.size(); ++i)
        if (const auto l = last[round[i].path]; l != i) {
            round[i].result = round[l].result;
            round[i].deferred = round[l].deferred;
        }
}

}  // namespace taskscope::common
