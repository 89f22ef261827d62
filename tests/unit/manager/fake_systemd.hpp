#pragma once
// A SystemdClient that keeps units in a map and records what it was asked,
// for the manager's logic tests. Hooks let a test act in the middle of a
// call (a start racing a reconciler pass).

#include <signal.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "scope/systemd_client.hpp"

namespace taskscope::test {

class FakeSystemd final : public scope::SystemdClient {
public:
    std::map<std::string, scope::UnitInfo> units;
    std::vector<std::string> killed;  ///< "unit whom signal"
    std::function<void(const std::string& unit)> onUnitInfo;
    bool failListing = false;

    void addScope(const std::string& unit, const std::string& slice, uint64_t activeSinceUs,
                  const std::string& active = "active") {
        units[unit] = scope::UnitInfo{slice, {active, active == "active" ? "running" : "dead"}, activeSinceUs};
    }

    common::Result<void> startScope(const std::string& unit, const std::vector<uint32_t>&,
                                    const scope::UnitProperties&) override {
        addScope(unit, "nomad.slice", 1);
        return {};
    }
    common::Result<void> killUnit(const std::string& unit, const std::string& whom, int signal) override {
        if (!units.count(unit)) return common::makeError("NoSuchUnit", "no unit " + unit);
        killed.push_back(unit + " " + whom + " " + std::to_string(signal));
        if (signal == SIGKILL) units.erase(unit);
        return {};
    }
    common::Result<void> freezeUnit(const std::string&) override { return {}; }
    common::Result<void> thawUnit(const std::string&) override { return {}; }
    common::Result<void> stopUnit(const std::string& unit) override {
        units.erase(unit);
        return {};
    }
    common::Result<void> resetFailedUnit(const std::string&) override { return {}; }
    common::Result<void> setUnitProperties(const std::string&, const scope::UnitProperties&) override { return {}; }
    common::Result<std::string> controlGroup(const std::string& unit) override {
        if (!units.count(unit)) return common::makeError("NoSuchUnit", "no unit " + unit);
        return "/" + units[unit].slice + "/" + unit;
    }
    common::Result<scope::UnitState> unitState(const std::string& unit) override {
        if (!units.count(unit)) return common::makeError("NoSuchUnit", "no unit " + unit);
        return units[unit].state;
    }
    common::Result<scope::UnitInfo> unitInfo(const std::string& unit) override {
        if (onUnitInfo) onUnitInfo(unit);
        if (!units.count(unit)) return common::makeError("NoSuchUnit", "no unit " + unit);
        return units[unit];
    }
    common::Result<std::vector<std::string>> listUnits(const std::string&) override {
        if (failListing) return common::makeError("SystemdFailed", "listing refused");
        std::vector<std::string> names;
        for (const auto& [name, info] : units)
            if (name.size() > 6 && name.compare(name.size() - 6, 6, ".scope") == 0) names.push_back(name);
        return names;
    }
    common::Result<std::string> version() override { return std::string("252"); }
    // The reconciler asks nothing asynchronously; these complete at once.
    void startScopeAsync(const std::string& unit, const std::vector<uint32_t>& pids,
                         const scope::UnitProperties& properties, Completion done) override {
        done(startScope(unit, pids, properties));
    }
    void stopUnitAsync(const std::string& unit, Completion done) override { done(stopUnit(unit)); }
    void setUnitPropertiesAsync(const std::string& unit, const scope::UnitProperties& properties,
                                Completion done) override {
        done(setUnitProperties(unit, properties));
    }
};

}  // namespace taskscope::test
