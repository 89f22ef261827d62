#pragma once
// A cgroup as systemd names it (its unit's ControlGroup property, such as
// "/nomad.slice/a1-web.scope"): a value type, validated once, so that no
// string that could climb out of the cgroup tree ever reaches openat().

#include <compare>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace taskscope::scope {

class CgroupPath {
public:
    /// Accepts an absolute path below the root whose components are
    /// neither empty, "." nor ".."; the root itself is refused, since no
    /// task lives there. InvalidArgument otherwise.
    static common::Result<CgroupPath> parse(std::string_view path);

    /// "/nomad.slice/a1-web.scope"
    const std::string& str() const { return path_; }
    /// "nomad.slice/a1-web.scope": relative to a hierarchy's root, for openat().
    std::string relative() const { return path_.substr(1); }
    /// The last component: "a1-web.scope".
    std::string_view name() const;

    /// The innermost proper ancestor whose last component is `name`
    /// ("/nomad.slice/x.slice/a1-web.scope" and "x.slice" give
    /// "/nomad.slice/x.slice"); nullopt when none is. How a task's
    /// allocation slice is found in the cgroup systemd reported for the
    /// task, on v1 and v2 alike, without rebuilding a path from names.
    std::optional<CgroupPath> ancestorNamed(std::string_view name) const;

    auto operator<=>(const CgroupPath&) const = default;

private:
    explicit CgroupPath(std::string path) : path_(std::move(path)) {}
    std::string path_;
};

}  // namespace taskscope::scope
