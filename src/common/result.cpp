#include "common/result.hpp"

#include "common/error_names.hpp"

#include <cerrno>
#include <cstring>

namespace taskscope::common {

Error errnoError(const std::string& what, int err, const std::string& name) {
    // Out of descriptors is a limit, not a bug: callers (and D-Bus clients)
    // can tell it apart and say which limit.
    if ((err == EMFILE || err == ENFILE) && name == errors::kInternal)
        return {errors::kResourceExhausted, what + ": " + std::strerror(err)};
    return {name, what + ": " + std::strerror(err)};
}

}  // namespace taskscope::common
