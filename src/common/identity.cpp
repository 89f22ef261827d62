#include "common/identity.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "common/error_names.hpp"
#include "common/safe_path.hpp"

namespace taskscope::common {

Result<Identity> resolveIdentity(const std::string& user, const std::string& group) {
    // getpwnam_r/getgrnam_r with fixed buffers would truncate on large group
    // databases; both daemons are single-threaded, so the plain calls are safe.
    const passwd* pw = ::getpwnam(user.c_str());
    if (pw == nullptr) return makeError(common::errors::kUnknownUser, "user '" + user + "' does not exist");
    Identity id;
    id.uid = pw->pw_uid;
    id.gid = pw->pw_gid;
    const std::string userName = pw->pw_name;
    if (!group.empty()) {
        const struct group* gr = ::getgrnam(group.c_str());
        if (gr == nullptr) return makeError(common::errors::kUnknownUser, "group '" + group + "' does not exist");
        id.gid = gr->gr_gid;
    }
    int n = 0;
    ::getgrouplist(userName.c_str(), id.gid, nullptr, &n);
    id.groups.resize(static_cast<size_t>(n));
    if (n > 0 && ::getgrouplist(userName.c_str(), id.gid, id.groups.data(), &n) >= 0)
        id.groups.resize(static_cast<size_t>(n));
    else
        id.groups = {id.gid};
    return id;
}

namespace {

struct FileCloser {
    void operator()(FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

}  // namespace

Result<Identity> resolveIdentityIn(const std::string& etcDir, const std::string& user, const std::string& group) {
    // fgetpwent/fgetgrent read the root's own files: NSS modules of the
    // host (sssd, systemd's dynamic users) have no say over another root.
    const auto passwdFile = etcDir + "/passwd", groupFile = etcDir + "/group";
    // A task can write its own root (etc/ in its task dir): no symlink is
    // followed to read them as root (issue 32); one is "cannot read".
    const auto open = [](const std::string& path) {
        auto fd = openNoSymlinks(path, O_RDONLY);
        File f(fd ? ::fdopen(fd->get(), "re") : nullptr);
        if (f) fd->release();  // the FILE owns it now
        return f;
    };
    File pf(open(passwdFile));
    if (!pf) return makeError(common::errors::kUnknownUser, "cannot read " + passwdFile + " of the task's root");
    std::optional<Identity> id;
    while (const passwd* pw = ::fgetpwent(pf.get()))
        if (user == pw->pw_name) {
            id = Identity{pw->pw_uid, pw->pw_gid, {}};
            break;
        }
    if (!id) return makeError(common::errors::kUnknownUser, "user '" + user + "' does not exist in " + passwdFile);
    File gf(open(groupFile));
    if (!gf) return makeError(common::errors::kUnknownUser, "cannot read " + groupFile + " of the task's root");
    bool groupFound = group.empty();
    std::vector<gid_t> member;
    while (const struct group* gr = ::fgetgrent(gf.get())) {
        if (!group.empty() && group == gr->gr_name) {
            id->gid = gr->gr_gid;
            groupFound = true;
        }
        for (char** m = gr->gr_mem; m && *m; ++m)
            if (user == *m) member.push_back(gr->gr_gid);
    }
    // As getgrouplist(3): the task's group first, then the user's others.
    id->groups = {id->gid};
    for (gid_t g : member)
        if (g != id->gid) id->groups.push_back(g);
    if (!groupFound) return makeError(common::errors::kUnknownUser, "group '" + group + "' does not exist in " + groupFile);
    return *id;
}

}  // namespace taskscope::common
