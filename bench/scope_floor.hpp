#pragma once
// The floor the start benchmarks compare against: what any launcher must do
// to start a process in its own scope, issued straight to systemd with no
// taskscope code in the path. Fork a child held before exec,
// StartTransientUnit of a scope holding it, wait for the job's JobRemoved
// (it may come before the call's reply), release the child (it execs
// `sleep 3600` so the scope stays, as a task's does). Every scope goes into
// one slice that clear() stops.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <sdbus-c++/sdbus-c++.h>
#include <set>
#include <string>
#include <vector>

#include "common/sdbus_compat.hpp"

namespace bench {

using Clock = std::chrono::steady_clock;
constexpr const char* kSystemd = "org.freedesktop.systemd1";
constexpr const char* kSystemdPath = "/org/freedesktop/systemd1";
constexpr const char* kSystemdManager = "org.freedesktop.systemd1.Manager";
constexpr const char* kBenchSlice = "bench-floor.slice";

inline double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// At most `limit` operations in flight; drain() returns when all are done.
class InFlight {
public:
    explicit InFlight(int limit) : limit_(limit) {}
    void acquire() {
        std::unique_lock lock(m_);
        cv_.wait(lock, [&] { return busy_ < limit_; });
        ++busy_;
    }
    void release() {
        {
            std::lock_guard lock(m_);
            --busy_;
        }
        cv_.notify_all();
    }
    void drain() {
        std::unique_lock lock(m_);
        cv_.wait(lock, [&] { return busy_ == 0; });
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    int limit_;
    int busy_ = 0;
};

// Runs `call(i, done)` for i in [0, n) with `level` calls in flight (each
// calls done() when its reply has come); returns the seconds it took.
template <class Call>
double fanOut(int n, int level, Call call) {
    InFlight inflight(level);
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
        inflight.acquire();
        call(i, [&inflight] { inflight.release(); });
    }
    inflight.drain();
    return msSince(t0) / 1000.0;
}

/// Needs the connection's event loop running (enterEventLoopAsync) once
/// constructed: replies and JobRemoved arrive there.
class Floor {
    struct Pending {
        int go = -1;
        pid_t child = 0;
        std::function<void()> done;
    };

public:
    explicit Floor(sdbus::IConnection& bus)
        : systemd_(sdbus::createProxy(bus, taskscope::sdbus_compat::ServiceName{kSystemd},
                                      sdbus::ObjectPath{kSystemdPath})) {
        systemd_->uponSignal("JobRemoved")
            .onInterface(kSystemdManager)
            .call([this](uint32_t, const sdbus::ObjectPath& job, const std::string&, const std::string& result) {
                jobDone(job, result);
            });
        taskscope::sdbus_compat::finishRegistration(*systemd_);
        systemd_->callMethod("Subscribe").onInterface(kSystemdManager);
    }

    // Starts n scopes with `level` in flight; returns the seconds it took.
    double secondsToStart(const std::string& tag, int n, int level) {
        InFlight inflight(level);
        failures_ = 0;
        const auto t0 = Clock::now();
        for (int i = 0; i < n; ++i) {
            inflight.acquire();
            startOne("bench-floor-" + tag + "-" + std::to_string(i) + ".scope", [&inflight] { inflight.release(); });
        }
        inflight.drain();
        const double secs = msSince(t0) / 1000.0;
        if (failures_) std::fprintf(stderr, "floor %s: %d failures\n", tag.c_str(), failures_.load());
        return secs;
    }

    // Everything the floor started goes; waits until systemd is done.
    void clear() {
        try {
            sdbus::ObjectPath job;
            systemd_->callMethod("StopUnit").onInterface(kSystemdManager).withArguments(kBenchSlice, "replace")
                .storeResultsTo(job);
            waitJob(job);
        } catch (const sdbus::Error& e) {
            std::fprintf(stderr, "stop %s: %s\n", kBenchSlice, e.getMessage().c_str());
        }
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
    }

    /// Starts one scope; `done` runs (on the event loop) once its child was released.
    void startOne(const std::string& unit, std::function<void()> done) {
        int go[2];
        if (::pipe2(go, O_CLOEXEC) < 0) std::abort();
        const pid_t child = ::fork();
        if (child == 0) {
            char c;
            if (::read(go[0], &c, 1) != 1) _exit(127);
            ::execl("/bin/sleep", "sleep", "3600", nullptr);
            _exit(127);
        }
        ::close(go[0]);
        std::vector<sdbus::Struct<std::string, sdbus::Variant>> props{
            {"Slice", sdbus::Variant(std::string(kBenchSlice))},
            {"PIDs", sdbus::Variant(std::vector<uint32_t>{static_cast<uint32_t>(child)})},
            {"CollectMode", sdbus::Variant(std::string("inactive-or-failed"))}};
        std::vector<sdbus::Struct<std::string, std::vector<sdbus::Struct<std::string, sdbus::Variant>>>> aux;
        Pending p{go[1], child, std::move(done)};
        systemd_->callMethodAsync("StartTransientUnit")
            .onInterface(kSystemdManager)
            .withArguments(unit, "fail", props, aux)
            .uponReplyInvoke([this, p](taskscope::sdbus_compat::ReplyError err, sdbus::ObjectPath job) {
                if (err) {
                    std::fprintf(stderr, "floor start: %s\n", err->getMessage().c_str());
                    ++failures_;
                    finish(p);
                    return;
                }
                std::lock_guard lock(m_);
                if (auto it = done_.find(job); it != done_.end()) {
                    done_.erase(it);
                    finish(p);
                } else {
                    waiting_[job] = p;
                }
            });
    }

    void jobDone(const sdbus::ObjectPath& job, const std::string& result) {
        std::unique_lock lock(m_);
        results_[job] = result;
        jobCv_.notify_all();
        // JobRemoved may come before the call's reply: keep it for the reply.
        auto it = waiting_.find(job);
        if (it == waiting_.end()) {
            done_.insert(job);
            return;
        }
        auto p = it->second;
        waiting_.erase(it);
        lock.unlock();
        if (result != "done") ++failures_;
        finish(p);
    }

    void finish(const Pending& p) {
        if (::write(p.go, "g", 1) != 1) {
        }
        ::close(p.go);
        p.done();
    }

    /// One start, alone: milliseconds from fork to release.
    double startAndWait(const std::string& unit) {
        std::mutex m;
        std::condition_variable cv;
        bool finished = false;
        const auto t0 = Clock::now();
        startOne(unit, [&] {
            std::lock_guard lock(m);
            finished = true;
            cv.notify_all();
        });
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return finished; });
        return msSince(t0);
    }

    int failures() const { return failures_; }

private:


    void waitJob(const sdbus::ObjectPath& job) {
        std::unique_lock lock(m_);
        jobCv_.wait_for(lock, std::chrono::seconds(120), [&] { return results_.count(job) > 0; });
    }

    std::unique_ptr<sdbus::IProxy> systemd_;
    std::mutex m_;
    std::condition_variable jobCv_;
    std::map<sdbus::ObjectPath, Pending> waiting_;
    std::set<sdbus::ObjectPath> done_;
    std::map<sdbus::ObjectPath, std::string> results_;
    std::atomic<int> failures_{0};
};

}  // namespace bench
