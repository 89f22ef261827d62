// A cgroup path as a checked value (cgroup_path.hpp).
#include "scope/cgroup_path.hpp"

#include "common/error_names.hpp"

namespace taskscope::scope {

common::Result<CgroupPath> CgroupPath::parse(std::string_view path) {
    auto invalid = [&](const char* why) {
        return common::makeError(common::errors::kInvalidArgument, "cgroup path '" + std::string(path) + "' " + why);
    };
    if (path.empty() || path.front() != '/') return invalid("is not absolute");
    if (path == "/") return invalid("is the root cgroup");
    if (path.find('\0') != std::string_view::npos) return invalid("contains a NUL byte");
    std::string_view rest = path.substr(1);
    while (true) {
        const auto slash = rest.find('/');
        const auto part = rest.substr(0, slash);
        if (part.empty()) return invalid("has an empty component");
        if (part == "." || part == "..") return invalid("has a '.' or '..' component");
        if (slash == std::string_view::npos) break;
        rest = rest.substr(slash + 1);
    }
    return CgroupPath(std::string(path));
}

std::string_view CgroupPath::name() const {
    return std::string_view(path_).substr(path_.rfind('/') + 1);
}

std::optional<CgroupPath> CgroupPath::ancestorNamed(std::string_view name) const {
    if (name.empty()) return std::nullopt;
    // Every prefix that ends before a '/' (other than the root) is an
    // ancestor; the innermost is checked first.
    for (auto end = path_.rfind('/'); end != std::string::npos && end > 0; end = path_.rfind('/', end - 1)) {
        const auto begin = path_.rfind('/', end - 1);
        if (std::string_view(path_).substr(begin + 1, end - begin - 1) == name) return CgroupPath(path_.substr(0, end));
    }
    return std::nullopt;
}

}  // namespace taskscope::scope
