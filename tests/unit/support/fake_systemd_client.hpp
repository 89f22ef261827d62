#pragma once
// A scope::SystemdClient (and BlockingSystemd) for unit tests of the
// manager: records every call,
// fails the ones a test scripts to fail, and runs a test's hook while a
// call is "in flight" (before it returns). Asynchronous calls complete from
// the event loop given to it (as the real client's do), or are held back
// until the test releases them: systemd still working on a job.
// Scopes are bookkeeping only: killUnit signals the PIDs the scope was
// started with, so a test's task really dies when the manager kills it.
// Scopes a test adds by hand (addScope: someone else's, or left behind)
// have no PIDs; SIGKILL removes them, as systemd removes an emptied scope.

#include <signal.h>

#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/event_loop.hpp"
#include "scope/systemd_client.hpp"

namespace taskscope::test {

class FakeSystemdClient final : public scope::SystemdClient, public scope::BlockingSystemd {
public:
    struct Call {
        std::string method;  ///< "startScope", "killUnit", ...
        std::string unit;
        std::string detail;  ///< whom/signal for killUnit, property names for the setters
    };
    struct Scope {
        std::vector<uint32_t> pids;
        scope::UnitProperties properties;
        std::string active = "active";
        std::string slice = "fake.slice";
        uint64_t activeEnterUs = 1;  ///< µs since the epoch; 0: never active
    };

    /// A scope the manager did not start (no PIDs), in `slice`.
    void addScope(const std::string& unit, const std::string& slice, uint64_t activeEnterUs,
                  const std::string& active = "active") {
        Scope s;
        s.active = active;
        s.slice = slice;
        s.activeEnterUs = activeEnterUs;
        scopes[unit] = std::move(s);
    }
    /// "unit whom signal" for every killUnit call, in order.
    std::vector<std::string> killed() const {
        std::vector<std::string> out;
        for (const auto& c : calls)
            if (c.method == "killUnit") out.push_back(c.unit + " " + c.detail);
        return out;
    }
    /// Runs inside every unitInfo call (a start racing a reconciler pass).
    std::function<void(const std::string& unit)> onUnitInfo;

    /// The next call of `method` fails with `error` (queued, first in first out).
    void failNext(const std::string& method, common::Error error) { failures_[method].push_back(std::move(error)); }
    /// Holds the completions of `method`'s asynchronous calls back until
    /// release() (for every call while set).
    void hold(const std::string& method, bool on = true) { held_[method] = on; }
    /// Completes the held calls (of `unit`, or all), in the order they were made.
    size_t release(const std::string& unit = "") {
        size_t n = 0;
        for (auto it = parked.begin(); it != parked.end();) {
            if (!unit.empty() && it->unit != unit) {
                ++it;
                continue;
            }
            auto p = std::move(*it);
            it = parked.erase(it);
            post(std::move(p.done), std::move(p.result));
            ++n;
        }
        return n;
    }
    struct Parked {
        std::string method;
        std::string unit;
        Completion done;
        common::Result<void> result;
    };
    std::deque<Parked> parked;

    explicit FakeSystemdClient(common::EventLoop* loop = nullptr) : loop_(loop) {}

    void startScopeAsync(const std::string& unit, const std::vector<uint32_t>& pids,
                         const scope::UnitProperties& properties, const scope::AuxUnits& aux,
                         Completion done) override {
        auto r = startScopeWith(unit, pids, properties, aux.units);
        // The call is answered at once; its job may be held.
        if (r && aux.accepted) aux.accepted();
        complete("startScope", unit, std::move(r), std::move(done));
    }
    /// systemd's order: the scope, then its aux units (each recorded as an
    /// "auxSlice" call); one that is loaded already refuses the whole call.
    common::Result<void> startScopeWith(const std::string& unit, const std::vector<uint32_t>& pids,
                                        const scope::UnitProperties& properties,
                                        const std::vector<scope::AuxUnit>& aux) {
        for (const auto& a : aux)
            if (auto it = scopes.find(a.name); it != scopes.end() && it->second.active != "failed") {
                calls.push_back({"startScope", unit, "aux " + a.name + " exists"});
                return common::makeError("UnitExists", "unit " + a.name + " was already loaded");
            }
        if (auto r = startScope(unit, pids, properties); !r) return r;
        for (const auto& a : aux) {
            calls.push_back({"auxSlice", a.name, ""});
            Scope s;
            s.properties = a.properties;
            slices.insert(a.name);
            scopes[a.name] = std::move(s);
        }
        return {};
    }
    void startSliceAsync(const std::string& unit, const scope::UnitProperties& properties, Completion done) override {
        complete("startSlice", unit, startSlice(unit, properties), std::move(done));
    }
    common::Result<void> startSlice(const std::string& unit, const scope::UnitProperties& properties) {
        std::string names;
        for (const auto& p : properties) names += (names.empty() ? "" : ",") + p.get<0>();
        if (auto r = enter("startSlice", unit, names); !r) return r;
        if (auto it = scopes.find(unit); it != scopes.end() && it->second.active != "failed")
            return common::makeError("UnitExists", "unit " + unit + " already exists");
        Scope s;
        s.properties = properties;
        slices.insert(unit);
        scopes[unit] = std::move(s);
        return {};
    }
    /// The slices startSlice made (also those stopped since).
    std::set<std::string> slices;
    /// The last value of `property` given to `unit` (by a start or a set), or nullopt.
    std::optional<sdbus::Variant> propertyOf(const std::string& unit, const std::string& property) const {
        auto it = scopes.find(unit);
        if (it == scopes.end()) return std::nullopt;
        std::optional<sdbus::Variant> out;
        for (const auto& p : it->second.properties)
            if (p.get<0>() == property) out = p.get<1>();
        return out;
    }
    void stopUnitAsync(const std::string& unit, Completion done) override {
        complete("stopUnit", unit, stopUnit(unit), std::move(done));
    }
    void setUnitPropertiesAsync(const std::string& unit, const scope::UnitProperties& properties,
                                Completion done) override {
        complete("setUnitProperties", unit, setUnitProperties(unit, properties), std::move(done));
    }

    void killUnitAsync(const std::string& unit, const std::string& whom, int signal, Completion done) override {
        complete("killUnit", unit, killUnit(unit, whom, signal), std::move(done));
    }
    void freezeUnitAsync(const std::string& unit, Completion done) override {
        complete("freezeUnit", unit, freezeUnit(unit), std::move(done));
    }
    void thawUnitAsync(const std::string& unit, Completion done) override {
        complete("thawUnit", unit, thawUnit(unit), std::move(done));
    }
    void resetFailedUnitAsync(const std::string& unit, Completion done) override {
        complete("resetFailedUnit", unit, resetFailedUnit(unit), std::move(done));
    }
    void unitStateAsync(const std::string& unit, StateCompletion done) override {
        postValue(unitState(unit), std::move(done));
    }
    void controlGroupAsync(const std::string& unit, ValueCompletion<std::string> done) override {
        postValue(controlGroup(unit), std::move(done));
    }
    void unitInfoAsync(const std::string& unit, ValueCompletion<scope::UnitInfo> done) override {
        postValue(unitInfo(unit), std::move(done));
    }
    void listUnitsAsync(const std::string& pattern, ValueCompletion<std::vector<std::string>> done) override {
        postValue(listUnits(pattern), std::move(done));
    }
    /// Recorded as "roundTrip"; held like any other asynchronous call.
    void roundTripAsync(const std::string& unit, Completion done) override {
        complete("roundTrip", unit, enter("roundTrip", unit, ""), std::move(done));
    }

    /// Runs `hook` inside the next call of `method`, before it returns.
    void duringNext(const std::string& method, std::function<void()> hook) {
        hooks_[method].push_back(std::move(hook));
    }

    std::vector<Call> calls;
    std::map<std::string, Scope> scopes;  ///< by unit
    std::vector<uint32_t> lastStartPids;  ///< of the last startScope, also a failed one

    size_t count(const std::string& method, const std::string& unit = "") const {
        size_t n = 0;
        for (const auto& c : calls)
            if (c.method == method && (unit.empty() || c.unit == unit)) ++n;
        return n;
    }

    common::Result<void> startScope(const std::string& unit, const std::vector<uint32_t>& pids,
                                    const scope::UnitProperties& properties) override {
        lastStartPids = pids;
        if (auto r = enter("startScope", unit, std::to_string(pids.size()) + " pids"); !r) return r;
        // systemd removes a scope once its processes are gone.
        if (auto it = scopes.find(unit); it != scopes.end() && it->second.active != "failed" && populated(it->second))
            return common::makeError("UnitExists", "unit " + unit + " already exists");
        scopes[unit] = Scope{pids, properties, "active"};
        return {};
    }
    common::Result<void> killUnit(const std::string& unit, const std::string& whom, int signal) override {
        if (auto r = enter("killUnit", unit, whom + " " + std::to_string(signal)); !r) return r;
        auto it = scopes.find(unit);
        if (it == scopes.end()) return common::makeError("NoSuchUnit", "unit " + unit + " not loaded");
        for (auto pid : it->second.pids) ::kill(static_cast<pid_t>(pid), signal);
        if (signal == SIGKILL && it->second.pids.empty()) scopes.erase(it);
        return {};
    }
    common::Result<void> freezeUnit(const std::string& unit) override { return enter("freezeUnit", unit, ""); }
    common::Result<void> thawUnit(const std::string& unit) override { return enter("thawUnit", unit, ""); }
    common::Result<void> stopUnit(const std::string& unit) override {
        if (auto r = enter("stopUnit", unit, ""); !r) return r;
        scopes.erase(unit);
        return {};
    }
    common::Result<void> resetFailedUnit(const std::string& unit) override {
        if (auto r = enter("resetFailedUnit", unit, ""); !r) return r;
        if (auto it = scopes.find(unit); it != scopes.end() && it->second.active == "failed") scopes.erase(it);
        return {};
    }
    common::Result<void> setUnitProperties(const std::string& unit, const scope::UnitProperties& properties) override {
        std::string names;
        for (const auto& p : properties) names += (names.empty() ? "" : ",") + p.get<0>();
        if (auto r = enter("setUnitProperties", unit, names); !r) return r;
        auto& props = scopes[unit].properties;
        for (const auto& p : properties) props.push_back(p);
        return {};
    }
    common::Result<std::string> controlGroup(const std::string& unit) override {
        if (auto r = enter("controlGroup", unit, ""); !r) return r.error();
        auto it = scopes.find(unit);
        if (it == scopes.end()) return common::makeError("NoSuchUnit", "unit " + unit + " not loaded");
        return "/" + it->second.slice + "/" + unit;
    }
    common::Result<scope::UnitState> unitState(const std::string& unit) override {
        if (auto r = enter("unitState", unit, ""); !r) return r.error();
        auto it = scopes.find(unit);
        if (it == scopes.end()) return scope::UnitState{"inactive", "dead"};
        return scope::UnitState{it->second.active, it->second.active == "active" ? "running" : "failed"};
    }
    common::Result<scope::UnitInfo> unitInfo(const std::string& unit) override {
        if (auto r = enter("unitInfo", unit, ""); !r) return r.error();
        if (onUnitInfo) onUnitInfo(unit);
        auto it = scopes.find(unit);
        if (it == scopes.end()) return common::makeError("NoSuchUnit", "unit " + unit + " not loaded");
        const auto& sc = it->second;
        return scope::UnitInfo{sc.slice, {sc.active, sc.active == "active" ? "running" : "failed"}, sc.activeEnterUs};
    }
    common::Result<std::vector<std::string>> listUnits(const std::string& pattern) override {
        if (auto r = enter("listUnits", "", pattern); !r) return r.error();
        std::vector<std::string> out;
        // "*.suffix" as systemd matches it; anything else lists every unit.
        const auto suffix = pattern.size() > 1 && pattern[0] == '*' ? pattern.substr(1) : std::string();
        for (const auto& [unit, s] : scopes)
            if (suffix.empty() || unit.ends_with(suffix)) out.push_back(unit);
        return out;
    }
    common::Result<std::string> version() override { return std::string("252-fake"); }

private:
    void complete(const std::string& method, const std::string& unit, common::Result<void> result, Completion done) {
        if (held_[method]) {
            parked.push_back({method, unit, std::move(done), std::move(result)});
            return;
        }
        post(std::move(done), std::move(result));
    }
    template <class T>
    void postValue(common::Result<T> result, ValueCompletion<T> done) {
        if (!loop_) return done(std::move(result));
        loop_->addTimer(common::EventLoop::Clock::now(),
                        [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
    }
    void post(Completion done, common::Result<void> result) {
        if (!loop_) return done(std::move(result));
        loop_->addTimer(common::EventLoop::Clock::now(),
                        [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
    }

    common::EventLoop* loop_;
    std::map<std::string, bool> held_;

    static bool populated(const Scope& s) {
        for (auto pid : s.pids) {
            if (::kill(static_cast<pid_t>(pid), 0) < 0) continue;
            std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
            std::string stat((std::istreambuf_iterator<char>(in)), {});
            const auto close = stat.rfind(')');
            if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z') return true;
        }
        return false;
    }

    common::Result<void> enter(const std::string& method, const std::string& unit, const std::string& detail) {
        calls.push_back({method, unit, detail});
        if (auto it = hooks_.find(method); it != hooks_.end() && !it->second.empty()) {
            auto hook = std::move(it->second.front());
            it->second.pop_front();
            hook();
        }
        if (auto it = failures_.find(method); it != failures_.end() && !it->second.empty()) {
            auto error = std::move(it->second.front());
            it->second.pop_front();
            return error;
        }
        return {};
    }

    std::map<std::string, std::deque<common::Error>> failures_;
    std::map<std::string, std::deque<std::function<void()>>> hooks_;
};

}  // namespace taskscope::test
