// taskscopectl alloc: an allocation addressed by its ID alone (issue 49), as
// kubelet's pod slices are by pod UID. Its slice's name holds a bucket
// hashed from the ID, which nobody works out by hand; the manager knows the
// allocation's tasks (ListTasks) and each task its slice (GetTask's
// alloc_slice), and the streamer the allocation's totals (Stats1).

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "cli/manager_client.hpp"
#include "cli/stats_command.hpp"
#include "client/proxies.hpp"
#include "common/bus_error.hpp"
#include "common/error_names.hpp"
#include "wire/task_state.hpp"

namespace taskscope::cli {

namespace {

/// A task of the allocation as ListTasks lists it.
struct AllocTask {
    std::string task;
    std::string state;

    /// Its end is known: nothing to stop, ready to forget.
    bool finished() const {
        const auto s = wire::parseTaskState(state);
        return s && wire::isFinished(*s);
    }
};

/// Every allocation the manager knows, by ID, with its tasks in ListTasks'
/// order. One ListTasks: answered from memory, however many tasks.
std::map<std::string, std::vector<AllocTask>> allocations(ManagerProxy& m) {
    std::map<std::string, std::vector<AllocTask>> all;
    for (const auto& t : m->ListTasks()) all[t.get<0>()].push_back({t.get<1>(), t.get<2>()});
    return all;
}

/// The allocation's tasks; an allocation the manager knows no task of is
/// an error that names it.
std::vector<AllocTask> tasksOf(ManagerProxy& m, const std::string& alloc) {
    auto all = allocations(m);
    const auto it = all.find(alloc);
    if (it == all.end()) die("no allocation '" + alloc + "': the manager knows no task of it");
    return std::move(it->second);
}

bool isError(const sdbus::Error& e, const char* name) {
    return e.getName() == common::busErrorName(name);
}

/// The allocation's totals, or why there are none: the streamer samples
/// running tasks only (NoSuchAllocation once all have exited), has none
/// for a moment after a start (NoSample), or is not there.
std::optional<wire::AllocationStats> totalsOf(sdbus::IConnection& conn, const std::string& alloc, std::string& why) {
    client::StatsProxy stats(conn, client::Signals::Ignored);
    try {
        return stats.GetAllocationStats(alloc);
    } catch (const sdbus::Error& e) {
        if (!isError(e, common::errors::kNoSuchAllocation) && !isError(e, common::errors::kNoSample) &&
            !streamerGone(e))
            throw;
        why = e.getMessage();
        return std::nullopt;
    }
}

struct AllocOptions {
    bool json = false;
    std::string signal;    // "": the spec's kill_signal
    int64_t graceMs = -1;  // -1: the spec's kill_timeout_ms
    bool wait = true;
    std::vector<std::string> positional;
};

int64_t milliseconds(const std::string& v) {
    char* end = nullptr;
    errno = 0;
    const long long ms = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || errno || ms < 0) die("--grace takes milliseconds", 2);
    return ms;
}

/// The options of the alloc verbs: --json for each, stop's own for stop alone.
AllocOptions parseOptions(const std::string& verb, const std::vector<std::string>& args, bool json) {
    AllocOptions o;
    o.json = json;
    const bool stop = verb == "stop";
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--json")
            o.json = true;
        else if (stop && args[i] == "--signal" && i + 1 < args.size())
            o.signal = args[++i];
        else if (stop && args[i] == "--grace" && i + 1 < args.size())
            o.graceMs = milliseconds(args[++i]);
        else if (stop && args[i] == "--no-wait")
            o.wait = false;
        else if (!args[i].empty() && args[i][0] == '-')
            die("alloc " + verb + ": unknown option '" + args[i] + "'; see --help", 2);
        else
            o.positional.push_back(args[i]);
    }
    const size_t want = verb == "list" ? 0 : 1;
    if (o.positional.size() != want)
        die("alloc " + verb + (want ? " takes ALLOC" : " takes no argument") + "; see --help", 2);
    return o;
}

int list(ManagerProxy& m, const AllocOptions& o) {
    const auto all = allocations(m);
    auto arr = nlohmann::json::array();
    if (!o.json) std::printf("%-38s %5s %7s\n", "ALLOC", "TASKS", "RUNNING");
    for (const auto& [alloc, tasks] : all) {
        size_t running = 0;
        for (const auto& t : tasks) running += t.finished() ? 0 : 1;
        if (o.json)
            arr.push_back({{"alloc_id", alloc}, {"tasks", tasks.size()}, {"running", running}});
        else
            std::printf("%-38s %5zu %7zu\n", alloc.c_str(), tasks.size(), running);
    }
    if (o.json) std::cout << arr.dump() << "\n";
    return 0;
}

int status(sdbus::IConnection& conn, ManagerProxy& m, const AllocOptions& o) {
    const auto& alloc = o.positional[0];
    std::vector<std::string> replies;
    std::vector<wire::TaskInfo> infos;
    std::set<std::string> slices;  // two when it has tasks on reserved and on shared cores
    for (const auto& t : tasksOf(m, alloc)) {
        replies.push_back(m.getTask(conn, alloc, t.task));
        infos.push_back(readTask(replies.back()));
        if (!infos.back().allocSlice.empty()) slices.insert(infos.back().allocSlice);
    }
    std::string why;
    const auto totals = totalsOf(conn, alloc, why);

    if (o.json) {
        auto tasks = nlohmann::json::array();
        for (const auto& r : replies) tasks.push_back(nlohmann::json::parse(r));
        const nlohmann::json j{{"alloc_id", alloc},
                               {"slices", slices},
                               {"tasks", tasks},
                               {"totals", totals ? allocationJson(*totals) : nlohmann::json(nullptr)}};
        std::cout << j.dump() << "\n";
        return 0;
    }
    std::string sliceList;
    for (const auto& s : slices) sliceList += (sliceList.empty() ? "" : ",") + s;
    std::cout << "alloc_id: " << alloc << "\n"
              << "slice: " << (sliceList.empty() ? "- (its tasks are flat)" : sliceList) << "\n"
              << "totals: " << (totals ? allocationLine(*totals) : "- (" + why + ")") << "\n";
    std::printf("%-20s %-9s %8s  %s\n", "TASK", "STATE", "PID", "EXIT");
    for (const auto& t : infos) {
        const std::string pid = t.pid > 0 ? std::to_string(t.pid) : "-";  // 0 once it has ended
        const std::string exit = t.finished() ? exitText(exitOf(t)) : "-";
        std::printf("%-20s %-9s %8s  %s\n", t.task.c_str(), t.state.c_str(), pid.c_str(), exit.c_str());
    }
    return 0;
}

int stats(sdbus::IConnection& conn, ManagerProxy& m, const AllocOptions& o) {
    const auto& alloc = o.positional[0];
    (void)tasksOf(m, alloc);  // an unknown allocation is named as such, not as one without samples
    client::StatsProxy proxy(conn, client::Signals::Ignored);
    const auto totals = proxy.GetAllocationStats(alloc);
    if (o.json)
        std::cout << allocationJson(totals).dump() << "\n";
    else
        std::cout << alloc << ": " << allocationLine(totals) << "\n";
    return 0;
}

int stop(sdbus::IConnection& conn, ManagerProxy& m, const AllocOptions& o) {
    const auto& alloc = o.positional[0];
    const auto tasks = tasksOf(m, alloc);
    for (const auto& t : tasks) m.watch(alloc, t.task);
    // StopTask returns once the stop is under way (its end is TaskExited),
    // so asking one task after another stops them together: their graces
    // run side by side, and the waits below overlap as well.
    for (const auto& t : tasks) {
        if (t.finished()) continue;
        try {
            m->StopTask(alloc, t.task, o.signal, o.graceMs);
        } catch (const sdbus::Error& e) {
            // Exited since ListTasks: what the stop asks for is there, as
            // for `stop`.
            if (!isError(e, common::errors::kNotRunning)) throw;
        }
    }
    if (!o.wait) return 0;
    auto exits = nlohmann::json::array();
    for (const auto& t : tasks) {
        const auto e = awaitExit(conn, m, alloc, t.task);
        if (o.json) {
            auto j = exitJson(e);
            j["task"] = t.task;
            exits.push_back(std::move(j));
        } else {
            std::cout << t.task << ": exited: " << exitText(e) << "\n";
        }
    }
    if (o.json) std::cout << nlohmann::json{{"alloc_id", alloc}, {"tasks", exits}}.dump() << "\n";
    // 0 once every task has exited, whatever their codes, as `stop` says.
    return 0;
}

int forget(ManagerProxy& m, const AllocOptions& o) {
    const auto& alloc = o.positional[0];
    std::string running;
    size_t forgotten = 0;
    for (const auto& t : tasksOf(m, alloc)) {
        if (!t.finished()) {
            running += (running.empty() ? "" : ", ") + t.task;
            continue;
        }
        try {
            m->ForgetTask(alloc, t.task);
        } catch (const sdbus::Error& e) {
            // Forgotten by someone else meanwhile: gone, as asked.
            if (!isError(e, common::errors::kNoSuchTask)) throw;
        }
        ++forgotten;
    }
    // A running task cannot be forgotten (StillRunning): say which, and
    // what was done, rather than stop them unasked.
    if (!running.empty())
        die("allocation '" + alloc + "' still runs " + running + " (taskscopectl alloc stop " + alloc + " first)" +
            (forgotten ? "; its " + std::to_string(forgotten) + " exited task(s) are forgotten" : ""));
    return 0;
}

}  // namespace

int allocCommand(sdbus::IConnection& conn, const std::vector<std::string>& args, bool json) {
    if (args.empty()) die("alloc takes list, status, stats, stop or forget; see --help", 2);
    const std::string verb = args[0];
    if (verb != "list" && verb != "status" && verb != "stats" && verb != "stop" && verb != "forget")
        die("alloc takes list, status, stats, stop or forget, not '" + verb + "'; see --help", 2);
    const AllocOptions o = parseOptions(verb, {args.begin() + 1, args.end()}, json);
    ManagerProxy m(conn);
    if (verb == "list") return list(m, o);
    if (verb == "status") return status(conn, m, o);
    if (verb == "stats") return stats(conn, m, o);
    if (verb == "stop") return stop(conn, m, o);
    return forget(m, o);
}

}  // namespace taskscope::cli
