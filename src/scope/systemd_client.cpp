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

}  // namespace taskscope::scope
