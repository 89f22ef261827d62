#include "scope/systemd_client.hpp"

namespace taskscope::scope {

common::Result<void> startResettingFailed(SystemdClient& systemd, const std::string& unit,
                                          const std::function<common::Result<void>()>& start) {
    auto r = start();
    if (r || r.error().name != "UnitExists") return r;
    auto state = systemd.unitState(unit);
    if (!state || state->active != "failed") return r;
    if (auto reset = systemd.resetFailedUnit(unit); !reset) return reset;
    return start();
}

void startResettingFailedAsync(SystemdClient& systemd, const std::string& unit,
                               std::function<void(SystemdClient::Completion)> start, SystemdClient::Completion done) {
    auto retry = [&systemd, unit, start, done](common::Result<void> r) {
        if (r || r.error().name != "UnitExists") return done(std::move(r));
        auto state = systemd.unitState(unit);
        if (!state || state->active != "failed") return done(std::move(r));
        if (auto reset = systemd.resetFailedUnit(unit); !reset) return done(std::move(reset));
        start(done);
    };
    start(std::move(retry));
}

}  // namespace taskscope::scope
