#pragma once
// The one seam between taskscope and the two sdbus-c++ generations it
// builds against: 1.2 (Debian 12) and 2.1 (Debian 13). Everything else in
// the tree is written once, in 2.x's idiom where 1.x allows it (strong name
// types such as sdbus::ObjectPath{...}, explicit Variants, get<T>()); the
// few calls that 1.x spells otherwise, or that 2.x removed, go through here.
// CMake sets TASKSCOPE_SDBUS_MAJOR from the sdbus-c++ it found (the root
// CMakeLists.txt); no other file tests a version. sdbus-c++'s own guide to
// the move ("Migrating to sdbus-c++ v2", docs/using-sdbus-c++.md, v2.1.0)
// lists what changed.

#include <poll.h>
#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#if !defined(TASKSCOPE_SDBUS_MAJOR) || (TASKSCOPE_SDBUS_MAJOR != 1 && TASKSCOPE_SDBUS_MAJOR != 2)
#error "TASKSCOPE_SDBUS_MAJOR (1 or 2) comes from CMake (find_package(sdbus-c++))"
#endif

namespace taskscope::sdbus_compat {

#if TASKSCOPE_SDBUS_MAJOR >= 2
/// A bus name where the API takes one (2.x: a strong type; 1.x: a string).
using ServiceName = sdbus::ServiceName;
using InterfaceName = sdbus::InterfaceName;
using PropertyName = sdbus::PropertyName;
/// The error an asynchronous reply handler gets: none when the call
/// succeeded. 2.x hands it over by value, 1.x as a pointer; both test as
/// a bool and reach the error with ->.
using ReplyError = std::optional<sdbus::Error>;
#else
using ServiceName = std::string;
using InterfaceName = std::string;
using PropertyName = std::string;
using ReplyError = const sdbus::Error*;
#endif

/// ObjectManager's InterfacesAdded: each interface's properties.
using InterfacesAndProperties = std::map<InterfaceName, std::map<PropertyName, sdbus::Variant>>;

using InterfaceNames = std::vector<InterfaceName>;

/// The same with plain string names, for code written once for both (the
/// generated ObjectManager proxy hands over strong names in 2.x).
inline std::map<std::string, std::map<std::string, sdbus::Variant>> plainNames(const InterfacesAndProperties& in) {
    std::map<std::string, std::map<std::string, sdbus::Variant>> out;
    for (const auto& [interface, properties] : in) {
        auto& o = out[interface];
        for (const auto& [name, value] : properties) o.emplace(name, value);
    }
    return out;
}
inline std::vector<std::string> plainNames(const InterfaceNames& in) {
    return {in.begin(), in.end()};
}

/// A named D-Bus error (2.x's Error takes a strong Error::Name).
inline sdbus::Error makeError(const std::string& name, const std::string& message) {
#if TASKSCOPE_SDBUS_MAJOR >= 2
    return sdbus::Error(sdbus::Error::Name{name}, message);
#else
    return sdbus::Error(name, message);
#endif
}

/// Dispatches one pending message or timeout of `connection`; false when
/// nothing was pending (2.x renamed processPendingRequest).
inline bool processPending(sdbus::IConnection& connection) {
#if TASKSCOPE_SDBUS_MAJOR >= 2
    return connection.processPendingEvent();
#else
    return connection.processPendingRequest();
#endif
}

/// What an external loop waits on for one connection: its socket, and from
/// 2.x also the connection's event fd, which sdbus-c++ signals when a
/// synchronous call left messages in its queues (a loop that polls only
/// the socket could sleep on them); and the bus's own absolute
/// CLOCK_MONOTONIC deadline (a call's timeout), if any.
struct BusWait {
    pollfd socket{-1, 0, 0};
    int eventFd = -1;
    std::optional<std::chrono::steady_clock::time_point> deadline;

    /// Appends the fds to poll (one or two) to `fds`.
    void addTo(std::vector<pollfd>& fds) const {
        fds.push_back(socket);
        if (eventFd >= 0) fds.push_back({eventFd, POLLIN, 0});
    }
    /// poll(2)'s timeout until the deadline, at most `capMs` (-1: none),
    /// rounded up so it never wakes a millisecond early and spins.
    int timeoutMs(int capMs = -1) const {
        if (!deadline) return capMs;
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
        const long long ms = left.count() < 0 ? 0 : left.count();
        if (capMs >= 0 && ms > capMs) return capMs;
        return ms > 0x7fffffff ? 0x7fffffff : static_cast<int>(ms);
    }
};

inline BusWait busWait(const sdbus::IConnection& connection) {
    const auto pd = connection.getEventLoopPollData();
    BusWait w;
    w.socket = {pd.fd, pd.events, 0};
#if TASKSCOPE_SDBUS_MAJOR >= 2
    w.eventFd = pd.eventFd;
    const bool none = pd.timeout == std::chrono::microseconds::max();
    const auto at = pd.timeout;
#else
    const bool none = pd.timeout_usec == UINT64_MAX;
    const auto at = std::chrono::microseconds(pd.timeout_usec);
#endif
    // sdbus reports CLOCK_MONOTONIC, the clock steady_clock uses on Linux.
    if (!none) w.deadline = std::chrono::steady_clock::time_point(at);
    return w;
}

/// Polls `connection` alone until it has work or `capMs` passed (-1: the
/// bus's own deadline only). Returns poll(2)'s result.
inline int pollBus(const sdbus::IConnection& connection, int capMs = -1) {
    const auto w = busWait(connection);
    std::vector<pollfd> fds;
    w.addTo(fds);
    return ::poll(fds.data(), fds.size(), w.timeoutMs(capMs));
}

/// Hands the message whose handler is running to `use` (2.x returns it by
/// value, 1.x a pointer, null outside a handler; 1.x's Message cannot be
/// copied). False when there is none.
template <class Use>
bool withCurrentMessage(const sdbus::IObject& object, Use&& use) {
#if TASKSCOPE_SDBUS_MAJOR >= 2
    const auto m = object.getCurrentlyProcessedMessage();
    if (!m.isValid()) return false;
    use(m);
#else
    const auto* m = object.getCurrentlyProcessedMessage();
    if (m == nullptr) return false;
    use(*m);
#endif
    return true;
}

/// The unique name that sent `message`; "" when it carries none (2.x
/// returns sd-bus's pointer as is, null then).
inline std::string senderOf(const sdbus::Message& message) {
    const auto sender = message.getSender();
#if TASKSCOPE_SDBUS_MAJOR >= 2
    return sender ? std::string(sender) : std::string();
#else
    return sender;
#endif
}

/// A match rule on `connection` whose life is the returned slot's.
/// The handler reads the message (operator>>), so it gets it by reference:
/// 2.x hands the message over by value, 1.x by reference.
inline sdbus::Slot addMatch(sdbus::IConnection& connection, const std::string& rule,
                            std::function<void(sdbus::Message&)> handler) {
#if TASKSCOPE_SDBUS_MAJOR >= 2
    return connection.addMatch(
        rule, [h = std::move(handler)](sdbus::Message m) { h(m); }, sdbus::return_slot);
#else
    return connection.addMatch(rule, std::move(handler));
#endif
}

/// 1.x activates a proxy's signal subscriptions only on this call; 2.x
/// activates each at once and has no such call.
inline void finishRegistration([[maybe_unused]] sdbus::IProxy& proxy) {
#if TASKSCOPE_SDBUS_MAJOR < 2
    proxy.finishRegistration();
#endif
}

/// PropertiesChanged for `names` of `interface` on `object` (2.x takes
/// strong property names).
inline void emitPropertiesChanged(sdbus::IObject& object, const char* interface,
                                  const std::vector<std::string>& names) {
#if TASKSCOPE_SDBUS_MAJOR >= 2
    std::vector<sdbus::PropertyName> strong;
    strong.reserve(names.size());
    for (const auto& n : names) strong.emplace_back(n);
    object.emitPropertiesChangedSignal(sdbus::InterfaceName{interface}, strong);
#else
    object.emitPropertiesChangedSignal(interface, names);
#endif
}

/// 1.x activates what was registered on an object (its vtables, its
/// ObjectManager) only on this call; 2.x activates each at once.
inline void finishRegistration([[maybe_unused]] sdbus::IObject& object) {
#if TASKSCOPE_SDBUS_MAJOR < 2
    object.finishRegistration();
#endif
}

/// One interface of a hand-written object (the tests' stand-ins for
/// systemd and the manager; the product's objects are generated): 2.x
/// gathers the members into one vtable that add() registers, 1.x registers
/// each member on the object as it comes, and finishRegistration(object)
/// activates them after the last interface.
class VTable {
public:
    VTable(sdbus::IObject& object, std::string interface) : object_(object), interface_(std::move(interface)) {}

    template <class F>
    VTable& method(const std::string& name, F&& f) {
#if TASKSCOPE_SDBUS_MAJOR >= 2
        items_.push_back(sdbus::registerMethod(name).implementedAs(std::forward<F>(f)));
#else
        object_.registerMethod(name).onInterface(interface_).implementedAs(std::forward<F>(f));
#endif
        return *this;
    }
    template <class G>
    VTable& property(const std::string& name, G&& getter) {
#if TASKSCOPE_SDBUS_MAJOR >= 2
        items_.push_back(sdbus::registerProperty(name).withGetter(std::forward<G>(getter)));
#else
        object_.registerProperty(name).onInterface(interface_).withGetter(std::forward<G>(getter));
#endif
        return *this;
    }
    template <class... Args>
    VTable& signal(const std::string& name) {
#if TASKSCOPE_SDBUS_MAJOR >= 2
        items_.push_back(sdbus::registerSignal(name).withParameters<Args...>());
#else
        object_.registerSignal(name).onInterface(interface_).template withParameters<Args...>();
#endif
        return *this;
    }
    void add() {
#if TASKSCOPE_SDBUS_MAJOR >= 2
        object_.addVTable(std::move(items_)).forInterface(sdbus::InterfaceName{interface_});
        items_.clear();
#endif
    }

private:
    sdbus::IObject& object_;
    std::string interface_;
#if TASKSCOPE_SDBUS_MAJOR >= 2
    std::vector<sdbus::VTableItem> items_;
#endif
};

}  // namespace taskscope::sdbus_compat
