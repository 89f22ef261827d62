// What the systemd client does the same for every implementation
// (systemd_client.hpp).
#include "scope/systemd_client.hpp"

#include "common/error_names.hpp"

namespace taskscope::scope {

common::Result<void> startResettingFailed(BlockingSystemd& systemd, const std::string& unit,
                                          const std::function<common::Result<void>()>& start) {
    auto r = start();
    if (r || r.error().name != common::errors::kUnitExists) return r;
    auto state = systemd.unitState(unit);
    if (!state || state->active != "failed") return r;
    if (auto reset = systemd.resetFailedUnit(unit); !reset) return reset;
    return start();
}

void startResettingFailedAsync(SystemdClient& systemd, const std::string& unit,
                               std::function<void(SystemdClient::Completion)> start, SystemdClient::Completion done) {
    // Every step is asynchronous: the caller's loop never waits for PID 1,
    // which a fork bomb or a full node's stop can keep busy for seconds.
    auto retry = [&systemd, unit, start, done](common::Result<void> r) {
        if (r || r.error().name != common::errors::kUnitExists) return done(std::move(r));
        systemd.unitStateAsync(unit, [&systemd, unit, start, done, r](common::Result<UnitState> state) {
            if (!state || state->active != "failed") return done(r);
            systemd.resetFailedUnitAsync(unit, [start, done](common::Result<void> reset) {
                if (!reset) return done(std::move(reset));
                start(done);
            });
        });
    };
    start(std::move(retry));
}

}  // namespace taskscope::scope
