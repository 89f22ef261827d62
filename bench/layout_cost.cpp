// PID 1's cost per task start as a node fills, for a slice layout, with no
// taskscope code in the path (issue 31): the same units taskscope makes,
// asked of systemd straight, so flat and nested layouts are compared in one
// boot on equal terms.
//
//   taskscope-bench-layout N SHAPE LAYOUT [--cap M] [--overflow-group G] [--level L] [--step S]
//                          [--drain | --stop-drain] [--bare-scopes] [--as-taskscope]
//
//   SHAPE   single: one task per allocation; ten: allocations of 10 tasks;
//           one: one allocation of N tasks
//   LAYOUT  flat: every scope in probe.slice (taskscope before issue 31);
//           nested:F: probe.slice -> F bucket slices (a hash of the
//           allocation id picks one) -> one slice per allocation -> its
//           scopes; nested:FxG: two levels of buckets (F, then G in each);
//           an allocation slice holding M scopes (--cap, default 100) puts
//           the next ones in overflow slices of its own, M each
//   --overflow-group G  nests the overflow slices: the allocation slice
//           holds group slices (-g0, -g1, ...) of G overflow slices each,
//           not the overflow slices themselves (issue 49: does nesting
//           keep one large allocation's starts flat?)
//   --level L  tasks in flight (default 16)
//   --step S   print PID 1's CPU per task over every S tasks (default 500)
//   --as-taskscope  slices and scopes with taskscope's accounting
//              properties, scopes delegated with no controller
//              (DelegateControllers=): all a StartTask asks but weights
//   --drain    then kill every task at once, as a drained node's tasks end,
//              and follow systemd's collection: every 10 s the scopes left
//              and how long one new task (a new allocation) takes to start;
//              nested, then stop every allocation slice (as forgetting the
//              tasks does) and time that too
//   --stop-drain  then drain as an operator would with systemd alone:
//              StopUnit every task's scope (L in flight), as busctl would,
//              until systemd has collected them all, then every allocation
//              slice; meanwhile a new task (a new allocation) is started
//              every 2 s on a connection of its own, and timed against
//              the median of three started on the full node before (the
//              control for taskscope's drain, bench/node_drain.sh)
//
// A task is a forked child held on a pipe until its scope exists (as a
// task is), then pause(). Each slice is started explicitly, with a CPU
// weight, the first time a task needs it, its StartTransientUnit sent just
// before the scope's on the same connection (systemd handles one
// connection's calls in order, so the scope finds its slice loaded);
// a task counts as started once every job it asked for has ended.
// Everything is stopped at the end (StopUnit probe.slice).

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <thread>
#include <string>
#include <vector>

#include "common/sdbus_compat.hpp"
#include "pid1_cpu.hpp"
#include "scope_floor.hpp"

namespace {

using bench::Clock;
using bench::InFlight;
using bench::msSince;
using Props = std::vector<sdbus::Struct<std::string, sdbus::Variant>>;
using Aux = std::vector<sdbus::Struct<std::string, Props>>;

constexpr const char* kRoot = "probe";

struct Layout {
    bool flat = true;
    std::vector<unsigned> fanOut;  // one entry per bucket level
    size_t cap = 100;
    size_t overflowGroup = 0;  ///< 0: overflow slices beside the allocation's scopes
    bool bareScopes = false;
    /// The units carry taskscope's other properties (--as-taskscope): the
    /// accounting switches on slices and scopes, scopes delegated with no
    /// controller (what a start through StartTask asks besides weights).
    bool asTaskscope = false;
};

// FNV-1a: stable across runs and machines, as a bucket choice must be.
uint64_t fnv1a(const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

std::string hex2(unsigned v) {
    char buf[12];
    std::snprintf(buf, sizeof buf, "%02x", v);
    return buf;
}

/// Scopes below probe.slice, but those whose name begins with `skip`.
size_t scopesLeft(const std::string& skip = "") {
    size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator("/sys/fs/cgroup/probe.slice", ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_directory(ec)) {
            it.disable_recursion_pending();
            continue;
        }
        const auto name = it->path().filename().string();
        if (name.size() > 6 && name.compare(name.size() - 6, 6, ".scope") == 0) {
            if (skip.empty() || name.rfind(skip, 0) != 0) ++n;
            it.disable_recursion_pending();
        }
    }
    return n;
}

class Bench {
public:
    /// `made`: the slices another Bench made already (a second connection's).
    Bench(sdbus::IConnection& bus, Layout layout, const std::set<std::string>* made = nullptr)
        : layout_(std::move(layout)) {
        systemd_ = sdbus::createProxy(bus, taskscope::sdbus_compat::ServiceName{bench::kSystemd},
                                      sdbus::ObjectPath{bench::kSystemdPath});
        systemd_->uponSignal("JobRemoved")
            .onInterface(bench::kSystemdManager)
            .call([this](uint32_t, const sdbus::ObjectPath& job, const std::string&, const std::string& result) {
                jobEnded(job, result);
            });
        taskscope::sdbus_compat::finishRegistration(*systemd_);
        systemd_->callMethod("Subscribe").onInterface(bench::kSystemdManager);
        if (made) {
            made_ = *made;
            return;
        }
        // The root slice, as taskscope's configured slice exists before any task.
        startSync(std::string(kRoot) + ".slice", {{"CPUWeight", sdbus::Variant(uint64_t{100})}});
    }

    const std::set<std::string>& made() const { return made_; }

    // The slices (outermost first) and the scope of task `t` of allocation `alloc`.
    std::vector<std::string> unitsOf(const std::string& alloc, size_t t) {
        std::vector<std::string> units;
        std::string stem = kRoot;
        if (!layout_.flat) {
            uint64_t h = fnv1a(alloc);
            for (unsigned f : layout_.fanOut) {
                stem += "-b" + hex2(unsigned(h % f));
                h /= f;
                units.push_back(stem + ".slice");
            }
            stem += "-" + alloc;
            units.push_back(stem + ".slice");
            if (t >= layout_.cap) {
                const size_t o = t / layout_.cap;  // 1, 2, ...
                if (layout_.overflowGroup) {
                    stem += "-g" + std::to_string((o - 1) / layout_.overflowGroup);
                    units.push_back(stem + ".slice");
                }
                stem += "-o" + std::to_string(o);
                units.push_back(stem + ".slice");
            }
        }
        units.push_back(alloc + "-t" + std::to_string(t) + ".scope");
        return units;
    }

    // Starts one task; `done` runs once every job it asked for has ended.
    void startTask(const std::string& alloc, size_t t, std::function<void()> done) {
        auto units = unitsOf(alloc, t);
        const std::string scope = units.back();
        units.pop_back();
        scopes_.push_back(scope);
        std::string slice = std::string(kRoot) + ".slice";
        auto pending = std::make_shared<Task>();
        pending->done = std::move(done);
        // Every job is counted before the first call goes out: an answer
        // comes on the bus thread and may end a job at once.
        std::vector<std::string> newSlices;
        for (size_t i = 0; i < units.size(); ++i) {
            slice = units[i];
            if (!made_.insert(slice).second) continue;
            newSlices.push_back(slice);
            if (i >= layout_.fanOut.size()) allocSlices_.push_back(slice);  // not a bucket
        }
        pending->jobs = int(newSlices.size()) + 1;
        int go[2];
        if (::pipe2(go, O_CLOEXEC) < 0) std::abort();
        const pid_t child = ::fork();
        if (child == 0) {
            char c;
            if (::read(go[0], &c, 1) != 1) _exit(127);
            for (;;) ::pause();
        }
        ::close(go[0]);
        children_.push_back(child);
        pending->go = go[1];
        auto accounting = [&](Props& p) {
            if (!layout_.asTaskscope) return;
            for (const char* a : {"CPUAccounting", "MemoryAccounting", "TasksAccounting"})
                p.emplace_back(a, sdbus::Variant(true));
        };
        for (const auto& s : newSlices) {
            Props sliceProps = {{"CPUWeight", sdbus::Variant(uint64_t{100})}};
            accounting(sliceProps);
            startUnit(s, sliceProps, pending);
        }
        Props props = {{"Slice", sdbus::Variant(slice)},
                       {"PIDs", sdbus::Variant(std::vector<uint32_t>{uint32_t(child)})},
                       {"CollectMode", sdbus::Variant(std::string("inactive-or-failed"))}};
        if (!layout_.bareScopes) props.emplace_back("CPUWeight", sdbus::Variant(uint64_t{100}));
        accounting(props);
        if (layout_.asTaskscope) props.emplace_back("DelegateControllers", sdbus::Variant(std::vector<std::string>{}));
        startUnit(scope, props, pending);
    }

    double startAndWait(const std::string& alloc) {
        std::mutex m;
        std::condition_variable cv;
        bool finished = false;
        const auto t0 = Clock::now();
        startTask(alloc, 0, [&] {
            std::lock_guard lock(m);
            finished = true;
            cv.notify_all();
        });
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return finished; });
        return msSince(t0);
    }

    void killAll() {
        for (pid_t p : children_) ::kill(p, SIGKILL);
    }

    void stopAll() {
        std::mutex m;
        std::condition_variable cv;
        bool finished = false;
        auto task = std::make_shared<Task>();
        task->jobs = 1;
        task->done = [&] {
            std::lock_guard lock(m);
            finished = true;
            cv.notify_all();
        };
        try {
            sdbus::ObjectPath job;
            systemd_->callMethod("StopUnit")
                .onInterface(bench::kSystemdManager)
                .withArguments(std::string(kRoot) + ".slice", "replace")
                .withTimeout(std::chrono::minutes(30))
                .storeResultsTo(job);
            track(job, task);
        } catch (const sdbus::Error& e) {
            std::fprintf(stderr, "stop probe.slice: %s\n", e.getMessage().c_str());
            return;
        }
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return finished; });
    }

    /// Stops every allocation slice (and overflow slice), `level` at a
    /// time, as forgetting a drained node's tasks does; the buckets stay.
    /// Returns the seconds it took.
    double stopAllocSlices(int level) {
        const auto t0 = Clock::now();
        // Innermost first: an overflow slice before its allocation's.
        stopUnits({allocSlices_.rbegin(), allocSlices_.rend()}, level);
        const size_t n = allocSlices_.size();
        for (const auto& slice : allocSlices_) made_.erase(slice);
        allocSlices_.clear();
        std::printf("  %zu allocation slices stopped in %.0f s\n", n, msSince(t0) / 1000);
        return msSince(t0) / 1000;
    }

    /// Stops every task's scope, as an operator's busctl would; returns
    /// the seconds until every stop job has ended.
    double stopScopes(int level) {
        const auto t0 = Clock::now();
        stopUnits(scopes_, level);
        return msSince(t0) / 1000;
    }

    size_t allocSliceCount() const { return allocSlices_.size(); }
    int failures() const { return failures_; }

private:
    struct Task {
        std::atomic<int> jobs{0};
        int go = -1;
        std::function<void()> done;
    };

    /// StopUnit of each of `units`, `level` in flight; returns once every
    /// stop job has ended.
    void stopUnits(const std::vector<std::string>& units, int level) {
        InFlight inflight(level);
        for (const auto& unit : units) {
            inflight.acquire();
            auto task = std::make_shared<Task>();
            task->jobs = 1;
            task->done = [&inflight] { inflight.release(); };
            systemd_->callMethodAsync("StopUnit")
                .onInterface(bench::kSystemdManager)
                .withArguments(unit, "replace")
                .withTimeout(std::chrono::minutes(10))
                .uponReplyInvoke([this, unit, task](taskscope::sdbus_compat::ReplyError err, sdbus::ObjectPath job) {
                    if (err) {
                        std::fprintf(stderr, "stop %s: %s\n", unit.c_str(), err->getMessage().c_str());
                        ++failures_;
                        oneEnded(task);
                        return;
                    }
                    track(job, task);
                });
        }
        inflight.drain();
    }

    void startUnit(const std::string& unit, Props props, std::shared_ptr<Task> task) {
        systemd_->callMethodAsync("StartTransientUnit")
            .onInterface(bench::kSystemdManager)
            .withArguments(unit, "fail", props, Aux{})
            .withTimeout(std::chrono::minutes(10))
            .uponReplyInvoke([this, unit, task](taskscope::sdbus_compat::ReplyError err, sdbus::ObjectPath job) {
                if (err) {
                    std::fprintf(stderr, "start %s: %s\n", unit.c_str(), err->getMessage().c_str());
                    ++failures_;
                    oneEnded(task);
                    return;
                }
                track(job, task);
            });
    }

    void startSync(const std::string& unit, Props props) {
        auto task = std::make_shared<Task>();
        std::mutex m;
        std::condition_variable cv;
        bool finished = false;
        task->jobs = 1;
        task->done = [&] {
            std::lock_guard lock(m);
            finished = true;
            cv.notify_all();
        };
        startUnit(unit, std::move(props), task);
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return finished; });
    }

    // JobRemoved may come before the call's reply: whichever is second ends the job.
    void track(const sdbus::ObjectPath& job, const std::shared_ptr<Task>& task) {
        std::unique_lock lock(m_);
        if (auto it = ended_.find(job); it != ended_.end()) {
            const bool ok = it->second == "done";
            ended_.erase(it);
            lock.unlock();
            if (!ok) ++failures_;
            oneEnded(task);
            return;
        }
        waiting_[job] = task;
    }

    void jobEnded(const sdbus::ObjectPath& job, const std::string& result) {
        std::unique_lock lock(m_);
        auto it = waiting_.find(job);
        if (it == waiting_.end()) {
            ended_[job] = result;
            return;
        }
        auto task = it->second;
        waiting_.erase(it);
        lock.unlock();
        if (result != "done") {
            ++failures_;
            std::fprintf(stderr, "job %s: %s\n", job.c_str(), result.c_str());
        }
        oneEnded(task);
    }

    void oneEnded(const std::shared_ptr<Task>& task) {
        if (--task->jobs > 0) return;
        if (task->go >= 0) {
            if (::write(task->go, "g", 1) != 1) {
            }
            ::close(task->go);
        }
        task->done();
    }

    Layout layout_;
    std::unique_ptr<sdbus::IProxy> systemd_;
    std::set<std::string> made_;
    std::vector<std::string> allocSlices_;  ///< in the order made
    std::vector<std::string> scopes_;       ///< every task's, in the order started
    std::vector<pid_t> children_;
    std::mutex m_;
    std::map<sdbus::ObjectPath, std::shared_ptr<Task>> waiting_;
    std::map<sdbus::ObjectPath, std::string> ended_;
    std::atomic<int> failures_{0};
};

Layout parseLayout(const std::string& text, size_t cap) {
    Layout l;
    l.cap = cap;
    if (text == "flat") return l;
    if (text.rfind("nested:", 0) != 0) {
        std::fprintf(stderr, "layout must be flat or nested:F[xG]\n");
        std::exit(2);
    }
    l.flat = false;
    std::string rest = text.substr(7);
    size_t pos = 0;
    while (pos <= rest.size()) {
        const size_t x = rest.find('x', pos);
        const unsigned f = unsigned(std::strtoul(rest.substr(pos, x - pos).c_str(), nullptr, 10));
        if (f < 1 || f > 255) {
            std::fprintf(stderr, "a fan-out is 1 to 255\n");
            std::exit(2);
        }
        l.fanOut.push_back(f);
        if (x == std::string::npos) break;
        pos = x + 1;
    }
    return l;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr,
                     "usage: %s N single|ten|one flat|nested:F[xG] [--cap M] [--overflow-group G] [--level L] "
                     "[--step S] [--drain] [--bare-scopes] [--as-taskscope]\n",
                     argv[0]);
        return 2;
    }
    const size_t n = std::strtoul(argv[1], nullptr, 10);
    const std::string shape = argv[2];
    size_t cap = 100, step = 500, overflowGroup = 0;
    int level = 16;
    bool drain = false, stopDrain = false, bareScopes = false, asTaskscope = false;
    for (int i = 4; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--cap" && i + 1 < argc) cap = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--overflow-group" && i + 1 < argc) overflowGroup = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--level" && i + 1 < argc) level = std::atoi(argv[++i]);
        else if (a == "--step" && i + 1 < argc) step = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--drain") drain = true;
        else if (a == "--stop-drain") stopDrain = true;
        else if (a == "--bare-scopes") bareScopes = true;
        else if (a == "--as-taskscope") asTaskscope = true;
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    size_t perAlloc = shape == "single" ? 1 : shape == "ten" ? 10 : shape == "one" ? n : 0;
    if (!perAlloc || !n || !cap || level < 1) {
        std::fprintf(stderr, "bad N, shape, --cap or --level\n");
        return 2;
    }
    ::signal(SIGCHLD, SIG_IGN);  // killed holders are reaped by the kernel
    Layout layout = parseLayout(argv[3], cap);
    layout.overflowGroup = overflowGroup;
    layout.bareScopes = bareScopes;
    layout.asTaskscope = asTaskscope;
    auto bus = sdbus::createSystemBusConnection();
    bus->enterEventLoopAsync();
    Bench bench(*bus, layout);

    std::printf("layout %s%s%s%s, shape %s (%zu tasks per allocation), %zu tasks, %d in flight\n", argv[3],
                overflowGroup ? (" (overflow slices nested, " + std::to_string(overflowGroup) + " a group)").c_str() : "",
                bareScopes ? " (scopes without a CPU weight)" : "",
                asTaskscope ? " (accounting on, scopes delegated with no controller)" : "", shape.c_str(), perAlloc, n,
                level);
    InFlight inflight(level);
    double c0 = bench::pid1CpuSeconds();
    auto t0 = Clock::now();
    const auto start = t0;
    for (size_t i = 0; i < n; ++i) {
        inflight.acquire();
        bench.startTask("a" + std::to_string(i / perAlloc), i % perAlloc, [&inflight] { inflight.release(); });
        if ((i + 1) % step == 0) {
            inflight.drain();
            const double c1 = bench::pid1CpuSeconds();
            std::printf("  %6zu tasks: PID 1 %.1f ms per task, %.1f tasks/s (last %zu)\n", i + 1,
                        (c1 - c0) * 1000 / double(step), double(step) / (msSince(t0) / 1000), step);
            std::fflush(stdout);
            c0 = c1;
            t0 = Clock::now();
        }
    }
    inflight.drain();
    std::printf("  filled in %.0f s, %d failures\n", msSince(start) / 1000, bench.failures());
    std::printf("  one more task (new allocation) on the full node: %.0f ms\n", bench.startAndWait("fresh0"));

    if (drain) {
        const double d0 = bench::pid1CpuSeconds();
        const auto k0 = Clock::now();
        bench.killAll();
        for (int round = 1;; ++round) {
            ::sleep(10);
            const size_t left = scopesLeft();
            const double ms = bench.startAndWait("fresh" + std::to_string(round));
            std::printf("  %3.0f s after the kill: %zu scopes left; one new task started in %.0f ms\n",
                        msSince(k0) / 1000, left, ms);
            std::fflush(stdout);
            if (left <= size_t(round) + 1) break;  // only the fresh ones remain
        }
        std::printf("  drained: collected in under %.0f s, PID 1 %.1f ms per scope collected\n", msSince(k0) / 1000,
                    (bench::pid1CpuSeconds() - d0) * 1000 / double(n));
        if (!layout.flat) {
            const double s0 = bench::pid1CpuSeconds();
            const size_t slices = bench.allocSliceCount();
            bench.stopAllocSlices(level);
            std::printf("  PID 1 %.1f ms per allocation slice stopped\n",
                        (bench::pid1CpuSeconds() - s0) * 1000 / double(slices ? slices : 1));
        }
    }
    if (stopDrain) {
        std::vector<double> idle;
        for (int k = 0; k < 3; ++k) idle.push_back(bench.startAndWait("idle" + std::to_string(k)));
        std::sort(idle.begin(), idle.end());
        // The probe: a connection of its own, as a scheduler's would be.
        auto pbus = sdbus::createSystemBusConnection();
        pbus->enterEventLoopAsync();
        Bench probe(*pbus, layout, &bench.made());
        std::atomic<bool> done{false};
        std::vector<double> during;
        std::thread prober([&] {
            for (int k = 0; !done; ++k) {
                during.push_back(probe.startAndWait("drainprobe" + std::to_string(k)));
                for (int w = 0; w < 20 && !done; ++w) std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
        });
        const double d0 = bench::pid1CpuSeconds();
        const auto k0 = Clock::now();
        const double stopped = bench.stopScopes(level);
        while (scopesLeft("drainprobe") > 0 && msSince(k0) < 3600e3)
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
        const double collected = msSince(k0) / 1000;
        const double pid1 = bench::pid1CpuSeconds() - d0;
        done = true;
        prober.join();
        const double slicesS = bench.stopAllocSlices(level);
        std::sort(during.begin(), during.end());
        auto q = [&](double f) { return during.empty() ? 0.0 : during[size_t(f * double(during.size() - 1))]; };
        std::printf("stop-drain of %zu: every stop job ended after %.0f s, every scope collected after %.0f s (PID 1 "
                    "%.1f ms per task), then the allocation slices in %.0f s: %.0f s in all\n",
                    n, stopped, collected, pid1 * 1000 / double(n), slicesS, collected + slicesS);
        std::printf("  a new task on the full node before: median %.0f ms of 3; %zu started during the drain, median "
                    "%.0f ms (%.2fx), p90 %.0f ms, max %.0f ms (%.2fx)\n",
                    idle[1], during.size(), q(0.5), q(0.5) / idle[1], q(0.9), q(1.0), q(1.0) / idle[1]);
        probe.killAll();
    }
    bench.stopAll();
    bench.killAll();
    return bench.failures() ? 1 : 0;
}
