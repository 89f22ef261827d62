#pragma once
// The one way a library error crosses the bus: common::Error{name, message}
// becomes the D-Bus error org.taskscope.Error.<name> with that message, and
// back. Every adaptor converts through here so the names stay one family.

#include <sdbus-c++/sdbus-c++.h>

#include <string>
#include <type_traits>
#include <utility>

#include "common/error_names.hpp"
#include "common/result.hpp"
#include "common/sdbus_compat.hpp"

namespace taskscope::common {

inline constexpr const char* kBusErrorPrefix = "org.taskscope.Error.";

inline sdbus::Error toBusError(const Error& e) {
    return sdbus_compat::makeError(kBusErrorPrefix + e.name, e.message);
}

/// The way back, for a reply from a peer daemon: org.taskscope.Error.<name>
/// becomes common::Error{name, message}; any other D-Bus error (the bus's,
/// a timeout) is Internal, saying what was asked and the D-Bus error.
inline Error fromBusError(const sdbus::Error& e, const std::string& what) {
    const auto& name = e.getName();
    if (name.rfind(kBusErrorPrefix, 0) == 0)
        return Error{name.substr(std::char_traits<char>::length(kBusErrorPrefix)), e.getMessage()};
    return Error{errors::kInternal, what + ": " + name + ": " + e.getMessage()};
}

/// The D-Bus error name of a taskscope error name ("NotRunning" ->
/// "org.taskscope.Error.NotRunning"), for callers holding an sdbus::Error.
inline std::string busErrorName(const char* name) { return std::string(kBusErrorPrefix) + name; }

/// The value of r, or throws its error as an sdbus::Error.
template <class T>
T unwrapForBus(Result<T>&& r) {
    if (!r) throw toBusError(r.error());
    if constexpr (!std::is_void_v<T>) return std::move(r).value();
}

}  // namespace taskscope::common
