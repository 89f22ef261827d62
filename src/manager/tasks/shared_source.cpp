// Whether a volume's source sits on a shared mount, read from the mount
// table (shared_source.hpp).
#include "manager/tasks/shared_source.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/error_names.hpp"
#include "common/safe_path.hpp"

namespace taskscope::manager {

namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() &&
            s.substr(i + 1, 3).find_first_not_of("01234567") == std::string_view::npos) {
            out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out += s[i];
        }
    }
    return out;
}

bool holds(const std::string& mountPoint, const std::string& path) {
    if (mountPoint == "/") return true;
    return path.compare(0, mountPoint.size(), mountPoint) == 0 &&
           (path.size() == mountPoint.size() || path[mountPoint.size()] == '/');
}

}  // namespace

std::optional<HoldingMount> holdingMount(std::string_view mountinfo, const std::string& path) {
    std::optional<HoldingMount> best;
    std::istringstream in{std::string(mountinfo)};
    std::string line;
    while (std::getline(in, line)) {
        // id parent major:minor root mount-point options [optional...] - fstype source super-options
        std::istringstream f(line);
        std::vector<std::string> w;
        for (std::string x; f >> x;) w.push_back(x);
        if (w.size() < 7) continue;
        const auto point = unescape(w[4]);
        if (!holds(point, path)) continue;
        if (best && point.size() < best->mountPoint.size()) continue;
        bool shared = false;
        for (size_t i = 6; i < w.size() && w[i] != "-"; ++i)
            if (w[i].rfind("shared:", 0) == 0) shared = true;
        best = HoldingMount{point, shared};
    }
    return best;
}

common::Result<void> ensureSharedSource(const std::string& source) {
    // The source as named, no symlink followed (issue 32): a volume source
    // in a directory a task can write, swapped for a link to /etc, must not
    // have the manager bind and share the host's /etc. The spec's paths
    // have no "." or ".." (isCleanAbsolutePath), so the name is the path.
    auto fd = common::openNoSymlinks(source, O_PATH | O_DIRECTORY);
    if (!fd) return common::makeError(common::errors::kInvalidSpec, "bidirectional volume source: " + fd.error().message);
    std::ifstream f("/proc/self/mountinfo");
    std::stringstream text;
    text << f.rdbuf();
    const auto holder = holdingMount(text.str(), source);
    if (holder && holder->shared) return {};
    if (::mount(common::fdPath(fd->get()).c_str(), common::fdPath(fd->get()).c_str(), nullptr, MS_BIND | MS_REC,
                nullptr) < 0)
        return common::errnoError("bind " + source + " onto itself", errno);
    // The fd still names the mount below the new bind: the bind is the
    // source opened again, checked to be the same directory.
    auto bound = common::openNoSymlinks(source, O_PATH | O_DIRECTORY);
    struct stat a {}, b {};
    if (!bound || ::fstat(fd->get(), &a) < 0 || ::fstat(bound->get(), &b) < 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino)
        return common::makeError("Internal", "bidirectional volume source " + source + " changed while it was bound");
    if (::mount(nullptr, common::fdPath(bound->get()).c_str(), nullptr, MS_SHARED, nullptr) < 0)
        return common::errnoError("make " + source + " shared", errno);
    return {};
}

}  // namespace taskscope::manager
