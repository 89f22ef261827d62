#include "stream/daemon/manager_lookup.hpp"

#include <sdbus-c++/sdbus-c++.h>
#include <nlohmann/json.hpp>

#include "stream/daemon/manager_address.hpp"

namespace taskscope::stream::daemon {

namespace {
constexpr auto kTimeout = std::chrono::seconds(5);
}  // namespace

ManagerLookup::ManagerLookup(sdbus::IConnection& connection)
    : proxy_(sdbus::createProxy(connection, kManager, kManagerPath)) {
    proxy_->finishRegistration();
}

ManagerLookup::~ManagerLookup() = default;

void ManagerLookup::logsDisabled(const std::string& allocId, const std::string& task, std::function<void(bool)> done) {
    proxy_->callMethodAsync("GetTask")
        .onInterface(kManager)
        .withTimeout(kTimeout)
        .withArguments(allocId, task)
        .uponReplyInvoke([done = std::move(done)](const sdbus::Error* error, const std::string& json) {
            if (error) return done(false);
            const auto j = nlohmann::json::parse(json, nullptr, false);
            const auto spec = j.is_object() ? j.value("spec", nlohmann::json::object()) : nlohmann::json::object();
            done(spec.is_object() && spec.value("logs", true) == false);
        });
}

}  // namespace taskscope::stream::daemon
