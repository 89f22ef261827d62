#pragma once
// Asynchronous calls through the proxies that sdbus-c++-xml2cpp generates.
// Its asynchronous methods (annotated org.freedesktop.DBus.Method.Async
// "client" in the XML) report every reply to one virtual on<Method>Reply of
// the proxy object, without saying which call the reply answers. So that
// each call gets its own continuation, each call in flight has a proxy
// object of its own; its signals are never subscribed (no registerProxy()),
// so it costs the bus nothing. Idle ones are kept for the next calls.

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace taskscope::stream::daemon {

/// A call object's continuation, and whether its call is in flight: from
/// start() until the continuation given to it has returned.
template <class Done>
class InFlight {
public:
    bool busy() const { return busy_; }

    /// Keeps done and sends; a send that throws leaves the call idle.
    template <class Send>
    void start(Done done, Send&& send) {
        done_ = std::move(done);
        busy_ = true;
        try {
            send();
        } catch (...) {
            busy_ = false;
            done_ = nullptr;
            throw;
        }
    }

    /// Hands the reply to the continuation (which may start the next call).
    template <class... Reply>
    void finish(Reply&&... reply) {
        struct Idle {
            bool& busy;
            ~Idle() { busy = false; }
        } idle{busy_};
        auto done = std::move(done_);
        done_ = nullptr;
        done(std::forward<Reply>(reply)...);
    }

private:
    bool busy_ = false;
    Done done_;
};

/// Call: a proxy class with bool busy() const (its InFlight's).
template <class Call>
class CallPool {
public:
    using Make = std::function<std::unique_ptr<Call>()>;

    explicit CallPool(Make make) : make_(std::move(make)) {}
    CallPool(const CallPool&) = delete;
    CallPool& operator=(const CallPool&) = delete;

    /// An idle call, made when none is. Idle ones beyond kKeepIdle go here,
    /// never one whose reply is being handled (it is busy until its
    /// handler returns), so a continuation may start the next call.
    Call& idle() {
        Call* found = nullptr;
        size_t kept = 0;
        for (auto it = calls_.begin(); it != calls_.end();) {
            if ((*it)->busy()) {
                ++it;
            } else if (!found) {
                found = (it++)->get();
            } else if (++kept > kKeepIdle) {
                it = calls_.erase(it);
            } else {
                ++it;
            }
        }
        if (found) return *found;
        calls_.push_back(make_());
        return *calls_.back();
    }

    /// Calls in flight, and idle ones kept.
    size_t size() const { return calls_.size(); }

private:
    static constexpr size_t kKeepIdle = 4;

    Make make_;
    std::vector<std::unique_ptr<Call>> calls_;
};

}  // namespace taskscope::stream::daemon
