#include "common/result.hpp"

#include <cstring>

namespace taskscope::common {

Error errnoError(const std::string& what, int err, const std::string& name) {
    return {name, what + ": " + std::strerror(err)};
}

}  // namespace taskscope::common
