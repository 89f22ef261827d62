// The node's cgroup tree: its version, a process's cgroup, a cgroup's files
// (cgroup_host.hpp).
#include "scope/cgroup_host.hpp"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <sstream>

#include "common/files.hpp"
#include "scope/cgroup_path.hpp"
#include "scope/mount_table.hpp"

namespace taskscope::scope {

const char* toString(CgroupVersion version) {
    return version == CgroupVersion::V2 ? "v2" : "v1";
}

CgroupVersion versionOfRootMount(std::string_view fsType) {
    return fsType == "cgroup2" ? CgroupVersion::V2 : CgroupVersion::V1;
}

CgroupVersion detectCgroupVersion(const std::string& root) {
    struct statfs fs {};
    return ::statfs(root.c_str(), &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC ? CgroupVersion::V2 : CgroupVersion::V1;
}

CgroupHost CgroupHost::detect(std::string root) {
    const auto version = detectCgroupVersion(root);
    return CgroupHost{std::move(root), version};
}

std::optional<std::string> CgroupHost::file(const std::string& cgroup, std::string_view hierarchy,
                                            std::string_view name) const {
    // A record's cgroup came from /proc, systemd or disk: only a path that
    // stays inside the tree is ever joined to the root.
    if (cgroup.empty()) return std::nullopt;
    const auto base = root + (hierarchy.empty() ? "" : "/" + std::string(hierarchy));
    if (cgroup == "/") return base + "/" + std::string(name);
    auto path = CgroupPath::parse(cgroup);
    if (!path) return std::nullopt;
    return base + path->str() + "/" + std::string(name);
}

std::optional<std::string> CgroupHost::processesFile(const std::string& cgroup) const {
    // cgroup v1: the hierarchy systemd tracks processes in.
    return file(cgroup, unified() ? "" : "systemd", "cgroup.procs");
}

std::optional<std::string> CgroupHost::eventsFile(const std::string& cgroup) const {
    if (!unified()) return std::nullopt;
    return file(cgroup, "", "cgroup.events");
}

bool CgroupHost::hasController(std::string_view v2Name, std::string_view v1Name) const {
    if (!unified()) {
        struct stat st {};
        return ::stat((root + "/" + std::string(v1Name)).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    auto text = common::readFile(root + "/cgroup.controllers");
    if (!text) return false;
    std::istringstream words(*text);
    for (std::string w; words >> w;)
        if (w == v2Name) return true;
    return false;
}

bool forEachProcCgroupLine(std::string_view text,
                           const std::function<bool(std::string_view controllers, std::string_view path)>& line) {
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const auto one = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        const auto first = one.find(':');
        const auto second = first == std::string_view::npos ? first : one.find(':', first + 1);
        if (second == std::string_view::npos) continue;
        if (line(one.substr(first + 1, second - first - 1), one.substr(second + 1))) return true;
    }
    return false;
}

std::string cgroupOfProcText(std::string_view text) {
    std::string unified, systemd;
    forEachProcCgroupLine(text, [&](std::string_view controllers, std::string_view path) {
        if (controllers == "name=systemd") {
            systemd = std::string(path);
            return true;
        }
        if (controllers.empty()) unified = std::string(path);
        return false;
    });
    return systemd.empty() ? unified : systemd;
}

std::string processCgroup(pid_t pid, const std::string& proc) {
    auto text = common::readFile(proc + "/" + std::to_string(pid) + "/cgroup");
    if (!text) return "";
    return cgroupOfProcText(*text);
}

bool cgroupIsWithin(std::string_view cgroup, std::string_view ancestor) {
    if (cgroup == ancestor) return true;
    return cgroup.size() > ancestor.size() && cgroup.substr(0, ancestor.size()) == ancestor &&
           (ancestor == "/" || cgroup[ancestor.size()] == '/');
}

std::vector<std::string> cgroupProcsFiles(std::string_view mountinfo, const std::string& relPath) {
    std::vector<std::string> out;
    auto mounts = parseMountInfo(mountinfo, "mountinfo", true);
    if (!mounts) return out;
    for (const auto& m : *mounts) {
        if (m.fsType != "cgroup" && m.fsType != "cgroup2") continue;
        // A hierarchy bind-mounted from below its root (a container's
        // view) does not show the host's paths: not ours to write.
        if (m.root != "/") continue;
        out.push_back(m.mountPoint + relPath + "/cgroup.procs");
    }
    return out;
}

common::Result<std::vector<std::string>> writableProcsFiles(const std::string& relPath) {
    auto mountinfo = readOwnMountInfo();
    if (!mountinfo) return mountinfo.error();
    std::vector<std::string> out;
    for (auto& file : cgroupProcsFiles(*mountinfo, relPath))
        if (::access(file.c_str(), W_OK) == 0) out.push_back(std::move(file));
    return out;
}

bool cgroupHasProcesses(const std::string& procsFile) {
    auto text = common::readFile(procsFile);
    return text && text->find_first_of("0123456789") != std::string::npos;
}

}  // namespace taskscope::scope
