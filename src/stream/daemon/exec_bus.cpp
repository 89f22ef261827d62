#include "stream/daemon/exec_bus.hpp"

#include <cstdint>
#include <vector>

#include "client/proxies.hpp"
#include "common/error_names.hpp"
#include "common/sdbus_compat.hpp"

namespace taskscope::stream::daemon {

/// One AttachProcessesToUnit in flight (see call_pool.hpp), through a
/// proxy of its own that subscribes to no signal.
class SdbusScopeAttacher::Call final {
public:
    using Done = std::function<void(common::Result<void>)>;

    explicit Call(sdbus::IConnection& connection) : systemd_(connection, client::Signals::Ignored) {
        systemd_.onAttached = [this](sdbus_compat::ReplyError error) {
            if (!error) return call_.finish(common::Result<void>());
            call_.finish(common::makeError(common::errors::kSystemdFailed, "systemd did not move the child into " +
                                                                               unit_ + ": " + error->getName() +
                                                                               ": " + error->getMessage()));
        };
    }

    bool busy() const { return call_.busy(); }

    void start(const std::string& unit, pid_t pid, Done done) {
        unit_ = unit;
        call_.start(std::move(done), [&] {
            systemd_.AttachProcessesToUnit(unit, std::string(), std::vector<uint32_t>{static_cast<uint32_t>(pid)});
        });
    }

private:
    client::SystemdManagerProxy systemd_;
    std::string unit_;
    InFlight<Done> call_;
};

SdbusScopeAttacher::SdbusScopeAttacher(sdbus::IConnection& connection)
    : calls_([&connection] { return std::make_unique<Call>(connection); }) {}

SdbusScopeAttacher::~SdbusScopeAttacher() = default;

void SdbusScopeAttacher::attach(const std::string& unit, pid_t pid, std::function<void(common::Result<void>)> done) {
    calls_.idle().start(unit, pid, std::move(done));
}

BusClientWatch::BusClientWatch(sdbus::IConnection& connection, std::function<void(const std::string&)> gone)
    : match_(sdbus_compat::addMatch(connection,
                                    "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                                    "interface='org.freedesktop.DBus',member='NameOwnerChanged'",
                                    [gone = std::move(gone)](sdbus::Message& msg) {
                                        std::string name, oldOwner, newOwner;
                                        msg >> name >> oldOwner >> newOwner;
                                        if (!name.empty() && name[0] == ':' && newOwner.empty()) gone(name);
                                    })) {}

}  // namespace taskscope::stream::daemon
