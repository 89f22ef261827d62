#include "stream/daemon/exec_bus.hpp"

#include <cstdint>
#include <vector>

#include "dbus/systemd1_manager_proxy.h"
#include "common/error_names.hpp"

namespace taskscope::stream::daemon {

namespace {

constexpr const char* kSystemd = "org.freedesktop.systemd1";
constexpr const char* kSystemdPath = "/org/freedesktop/systemd1";

}  // namespace

/// One AttachProcessesToUnit in flight (see call_pool.hpp).
class SdbusScopeAttacher::Call final : public sdbus::ProxyInterfaces<org::freedesktop::systemd1::Manager_proxy> {
public:
    using Done = std::function<void(common::Result<void>)>;

    explicit Call(sdbus::IConnection& connection) : ProxyInterfaces(connection, kSystemd, kSystemdPath) {}
    ~Call() { unregisterProxy(); }

    bool busy() const { return call_.busy(); }

    void start(const std::string& unit, pid_t pid, Done done) {
        unit_ = unit;
        call_.start(std::move(done), [&] {
            AttachProcessesToUnit(unit, std::string(), std::vector<uint32_t>{static_cast<uint32_t>(pid)});
        });
    }

private:
    void onAttachProcessesToUnitReply(const sdbus::Error* error) override {
        if (!error) return call_.finish(common::Result<void>());
        call_.finish(common::makeError(common::errors::kSystemdFailed, "systemd did not move the child into " + unit_ + ": " +
                                                            error->getName() + ": " + error->getMessage()));
    }
    // A call's proxy subscribes to no signal.
    void onJobRemoved(const uint32_t&, const sdbus::ObjectPath&, const std::string&, const std::string&) override {}

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
    : match_(connection.addMatch("type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                                 "interface='org.freedesktop.DBus',member='NameOwnerChanged'",
                                 [gone = std::move(gone)](sdbus::Message& msg) {
                                     std::string name, oldOwner, newOwner;
                                     msg >> name >> oldOwner >> newOwner;
                                     if (!name.empty() && name[0] == ':' && newOwner.empty()) gone(name);
                                 })) {}

}  // namespace taskscope::stream::daemon
