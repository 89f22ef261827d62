// `nomad alloc exec` as a gRPC reactor over the streamer's Exec1
// (exec_stream.hpp).
#include "nomad/exec_stream.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <vector>

#include "common/error_names.hpp"
#include "nomad/driver_service.hpp"
#include "nomad/grpc_errors.hpp"

namespace taskscope::nomad {

namespace errors = common::errors;

namespace {

namespace pb = hashicorp::nomad::plugins::drivers::proto;

constexpr size_t kMaxQueued = 16;  // responses of up to 32 KiB waiting for the client
constexpr int kTickMs = 500;       // how soon the threads see the call ending

uint16_t windowSize(int32_t v, uint16_t fallback) { return v >= 1 && v <= 4096 ? static_cast<uint16_t>(v) : fallback; }

// Writes all of `data` to a non-blocking fd, waiting for room, until
// `stop` says the call is ending. False when it could not.
bool writeAll(int fd, const std::string& data, const std::function<bool()>& stop) {
    size_t off = 0;
    while (off < data.size()) {
        const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
        if (n > 0) {
            off += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN) return false;
        if (stop()) return false;
        pollfd p{fd, POLLOUT, 0};
        ::poll(&p, 1, kTickMs);
    }
    return true;
}

void setNonBlocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

}  // namespace

ExecStreamReactor::ExecStreamReactor(PluginState& state) : state_(state) { StartRead(&in_); }

void ExecStreamReactor::OnReadDone(bool ok) {
    std::unique_lock lock(mu_);
    if (!ok) {
        // The client half-closed, or the call is over.
        readsEnded_ = true;
        const bool noSetup = !setupDone_;
        cv_.notify_all();
        if (noSetup) finishLocked(grpc::Status::OK);  // nothing was asked
        lock.unlock();
        pump();
        return;
    }
    if (!setupDone_) {
        setupDone_ = true;
        Request first = in_;
        lock.unlock();
        // The session starts on the output thread: a bus call does not
        // belong on gRPC's callback threads.
        output_ = std::thread([this, first] {
            setup(first);
            outputLoop();
        });
    } else {
        inbox_.push_back(in_);
        cv_.notify_all();
        if (ending_) return;
        lock.unlock();
    }
    StartRead(&in_);
}

void ExecStreamReactor::OnWriteDone(bool ok) {
    {
        std::lock_guard lock(mu_);
        writing_ = false;
        inFlight_.reset();
        if (!ok) finishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "the client stopped reading"));
        cv_.notify_all();
    }
    pump();
}

void ExecStreamReactor::OnCancel() {
    {
        std::lock_guard lock(mu_);
        finishLocked(grpc::Status::CANCELLED);
        cv_.notify_all();
    }
    pump();
}

void ExecStreamReactor::OnDone() {
    if (output_.joinable()) output_.join();
    if (input_.joinable()) input_.join();
    delete this;
}

void ExecStreamReactor::setup(const Request& first) {
    auto fail = [this](grpc::Status st) { finishAfterWrites(std::move(st)); };
    if (!first.has_setup())
        return fail(toStatus(common::makeError(errors::kInvalidArgument, "the first message must be setup")));
    const auto& s = first.setup();
    auto key = state_.find(s.task_id());
    if (!key) return fail(unknownTask(s.task_id()));
    if (s.command().empty()) return fail(toStatus(common::makeError(errors::kInvalidArgument, "no command")));
    // A connection of the session's own: when the call ends early, dropping
    // it hangs the session up (the streamer ends the sessions of a caller
    // that left).
    auto c = Client::connect();
    if (!c) return fail(toStatus(c.error()));
    tty_ = s.tty();
    rows_ = windowSize(first.tty_size().height(), 24);
    cols_ = windowSize(first.tty_size().width(), 80);
    std::map<std::string, std::string> env;
    if (tty_) env["TERM"] = "xterm";
    std::vector<std::string> cmd(s.command().begin(), s.command().end());
    auto session = (*c)->startExec(key->allocId, key->task, cmd, env, tty_, rows_, cols_);
    if (!session) return fail(toStatus(session.error()));
    for (auto& fd : session->fds) setNonBlocking(fd.get());
    {
        std::lock_guard lock(mu_);
        session_ = std::move(*session);
        client_ = std::move(*c);
    }
    input_ = std::thread([this] { inputLoop(); });
}

void ExecStreamReactor::inputLoop() {
    std::optional<ClientLease> own;  // for ResizeExec: the session's client is the output thread's
    const int inFd = session_->fds[0].get();
    bool stdinOpen = true;
    for (;;) {
        Request req;
        {
            std::unique_lock lock(mu_);
            cv_.wait(lock, [&] { return !inbox_.empty() || readsEnded_ || ending_; });
            if (inbox_.empty()) return;
            req = std::move(inbox_.front());
            inbox_.pop_front();
        }
        if (req.has_tty_size() && tty_) {
            if (!own) {
                auto cl = Client::acquire();
                if (cl) own = std::move(*cl);
            }
            if (own) (void)(*own)->resizeExec(session_->id, windowSize(req.tty_size().height(), rows_),
                                           windowSize(req.tty_size().width(), cols_));
        }
        if (req.has_stdin() && stdinOpen) {
            auto stop = [this] {
                std::lock_guard lock(mu_);
                return ending_;
            };
            if (!req.stdin().data().empty()) writeAll(inFd, req.stdin().data(), stop);
            if (req.stdin().close()) {
                stdinOpen = false;
                // A terminal has no half-close: EOF is ^D at a line's start.
                if (tty_) writeAll(inFd, "\x04", stop);
                else {
                    std::lock_guard lock(mu_);
                    session_->fds[0].reset();
                }
            }
        }
    }
}

void ExecStreamReactor::outputLoop() {
    {
        std::lock_guard lock(mu_);
        if (!session_) return;  // setup failed and finished the call
    }
    std::vector<std::pair<int, bool>> outputs;  // fd, is stderr
    if (tty_) outputs.push_back({session_->fds[0].get(), false});
    else outputs = {{session_->fds[1].get(), false}, {session_->fds[2].get(), true}};
    std::vector<pollfd> fds;
    for (auto [fd, err] : outputs) fds.push_back({fd, POLLIN, 0});
    size_t open = fds.size();
    char buf[32768];
    bool going = true;
    while (open > 0 && going) {
        if (::poll(fds.data(), fds.size(), kTickMs) < 0 && errno != EINTR) break;
        {
            std::lock_guard lock(mu_);
            if (ending_) going = false;
        }
        for (size_t i = 0; going && i < fds.size(); ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            Response r;
            auto* op = outputs[i].second ? r.mutable_stderr() : r.mutable_stdout();
            if (n <= 0) {  // EOF, or EIO once a terminal's last holder is gone
                op->set_close(true);
                fds[i].fd = -1;
                --open;
            } else {
                op->set_data(buf, static_cast<size_t>(n));
            }
            going = send(std::move(r));
        }
    }
    if (!going) {
        // The call ended first (the client left or cancelled): the session
        // is hung up with its connection, not waited for.
        std::lock_guard lock(mu_);
        client_.reset();
        return;
    }
    auto exit = client_->waitExec(session_->id);
    Response last;
    last.set_exited(true);
    if (exit) fillExit(*exit, *last.mutable_result());
    else last.mutable_result()->set_exit_code(-1);
    send(std::move(last));
    // Nomad reads until the call ends and never half-closes: end it now.
    finishAfterWrites(exit ? grpc::Status::OK : toStatus(exit.error()));
}

bool ExecStreamReactor::send(Response r) {
    {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return queue_.size() < kMaxQueued || ending_; });
        if (ending_) return false;
        queue_.push_back(std::move(r));
    }
    pump();
    return true;
}

void ExecStreamReactor::finishAfterWrites(grpc::Status status) {
    {
        std::lock_guard lock(mu_);
        if (!ending_ && !finishWith_) finishWith_ = std::move(status);
    }
    pump();
}

void ExecStreamReactor::finishLocked(grpc::Status status) {
    if (finished_) return;
    finished_ = true;
    ending_ = true;
    finishNow_ = std::move(status);
}

// Starts what is due, outside the lock (a reaction must not find it
// held): with no write in flight, the finish of a call that ended, else
// the next write, else the finish once the queue is empty.
void ExecStreamReactor::pump() {
    const Response* write = nullptr;
    std::optional<grpc::Status> finish;
    {
        std::lock_guard lock(mu_);
        if (writing_) {
            // OnWriteDone comes, and pumps again.
        } else if (finishNow_) {
            finish = std::move(finishNow_);
            finishNow_.reset();
        } else if (!finished_) {
            if (!queue_.empty()) {
                inFlight_ = std::move(queue_.front());
                queue_.pop_front();
                writing_ = true;
                write = &*inFlight_;
                cv_.notify_all();
            } else if (finishWith_) {
                finished_ = true;
                ending_ = true;
                finish = std::move(finishWith_);
                finishWith_.reset();
                cv_.notify_all();
            }
        }
    }
    if (write) StartWrite(write);
    if (finish) Finish(std::move(*finish));
}

}  // namespace taskscope::nomad
