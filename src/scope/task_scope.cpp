// Whether a cgroup is really a task's own scope (task_scope.hpp).
#include "scope/task_scope.hpp"

#include <vector>

#include "scope/cgroup_host.hpp"

namespace taskscope::scope {

namespace {

std::vector<std::string_view> components(std::string_view path) {
    std::vector<std::string_view> out;
    while (!path.empty()) {
        const auto slash = path.find('/', 1);
        out.push_back(path.substr(1, slash == std::string_view::npos ? std::string_view::npos : slash - 1));
        if (slash == std::string_view::npos) break;
        path = path.substr(slash);
    }
    return out;
}

// The index of the unit's component when the path has the slice above it
// ("-.slice": anywhere, the root slice has no directory); npos otherwise.
size_t unitIndex(const std::vector<std::string_view>& parts, std::string_view slice, std::string_view unit) {
    bool underSlice = slice == "-.slice";
    for (size_t i = 0; i < parts.size(); ++i) {
        if (underSlice && parts[i] == unit) return i;
        if (parts[i] == slice) underSlice = true;
    }
    return std::string_view::npos;
}

}  // namespace

common::Result<CgroupPath> checkTaskScope(std::string_view cgroup, std::string_view slice, std::string_view unit) {
    auto path = CgroupPath::parse(cgroup);
    if (!path) return path.error();
    const auto parts = components(path->str());
    if (unit.empty() || unitIndex(parts, slice, unit) != parts.size() - 1)
        return common::makeError("InvalidArgument", "cgroup '" + std::string(cgroup) + "' is not the scope " +
                                                        std::string(unit) + " below " + std::string(slice));
    return path;
}

common::Result<std::string> taskScopeFile(std::string_view root, std::string_view cgroup, std::string_view slice,
                                          std::string_view unit, std::string_view file) {
    auto path = checkTaskScope(cgroup, slice, unit);
    if (!path) return path.error();
    return std::string(root) + path->str() + "/" + std::string(file);
}

bool inTaskScope(std::string_view procCgroup, std::string_view slice, std::string_view unit) {
    if (unit.empty()) return false;
    return forEachProcCgroupLine(procCgroup, [&](std::string_view, std::string_view cgroup) {
        auto path = CgroupPath::parse(cgroup);
        return path && unitIndex(components(path->str()), slice, unit) != std::string_view::npos;
    });
}

}  // namespace taskscope::scope
