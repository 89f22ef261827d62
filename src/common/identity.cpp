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

std::optional<uint32_t> numericId(const std::string& name) {
    if (name.empty() || name.size() > 10 || name.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    const unsigned long long n = std::stoull(name);
    if (n >= 0xffffffffULL) return std::nullopt;
    return static_cast<uint32_t>(n);
}

namespace {

// A numeric user without a database entry: its own number as its group
// unless one is given (never root's group by accident), no other groups.
Identity bareNumericIdentity(uint32_t uid, gid_t groupGid, bool groupGiven) {
    Identity id;
    id.uid = uid;
    id.gid = groupGiven ? groupGid : uid;
    id.groups.assign(
        1, id.gid);  // not = {gid}: g++ 14 warns falsely (-Warray-bounds) on a one-element list, here and below
    return id;
}

}  // namespace

Result<Identity> resolveIdentity(const std::string& user, const std::string& group) {
    // getpwnam_r/getgrnam_r with fixed buffers would truncate on large group
    // databases; both daemons are single-threaded, so the plain calls are safe.
    const auto uidNumber = numericId(user);
    const auto gidNumber = numericId(group);
    gid_t groupGid = 0;
    if (gidNumber) {
        groupGid = *gidNumber;
    } else if (!group.empty()) {
        const struct group* gr = ::getgrnam(group.c_str());
        if (gr == nullptr) return makeError(common::errors::kUnknownUser, "group '" + group + "' does not exist");
        groupGid = gr->gr_gid;
    }
    const passwd* pw = uidNumber ? ::getpwuid(*uidNumber) : ::getpwnam(user.c_str());
    if (pw == nullptr && uidNumber) return bareNumericIdentity(*uidNumber, groupGid, !group.empty());
    if (pw == nullptr) return makeError(common::errors::kUnknownUser, "user '" + user + "' does not exist");
    Identity id;
    id.uid = pw->pw_uid;
    id.gid = pw->pw_gid;
    const std::string userName = pw->pw_name;
    if (!group.empty()) id.gid = groupGid;
    int n = 0;
    ::getgrouplist(userName.c_str(), id.gid, nullptr, &n);
    id.groups.resize(static_cast<size_t>(n));
    if (n > 0 && ::getgrouplist(userName.c_str(), id.gid, id.groups.data(), &n) >= 0)
        id.groups.resize(static_cast<size_t>(n));
    else
        id.groups.assign(1, id.gid);
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
    const auto uidNumber = numericId(user);
    const auto gidNumber = numericId(group);
    File pf(open(passwdFile));
    if (!pf && !uidNumber)
        return makeError(common::errors::kUnknownUser, "cannot read " + passwdFile + " of the task's root");
    std::optional<Identity> id;
    std::string userName = user;
    while (const passwd* pw = pf ? ::fgetpwent(pf.get()) : nullptr)
        if (uidNumber ? pw->pw_uid == *uidNumber : user == pw->pw_name) {
            id = Identity{pw->pw_uid, pw->pw_gid, {}};
            userName = pw->pw_name;
            break;
        }
    // A numeric user needs no entry: its own number as its group.
    if (!id && uidNumber) {
        id = Identity{*uidNumber, *uidNumber, {}};
        userName.clear();
    }
    if (!id) return makeError(common::errors::kUnknownUser, "user '" + user + "' does not exist in " + passwdFile);
    if (gidNumber) id->gid = *gidNumber;
    File gf(open(groupFile));
    // Nothing to look up: an entry-less numeric user with a numeric or no group.
    if (!gf && userName.empty() && (gidNumber || group.empty())) {
        id->groups.assign(1, id->gid);
        return *id;
    }
    if (!gf) return makeError(common::errors::kUnknownUser, "cannot read " + groupFile + " of the task's root");
    bool groupFound = group.empty() || gidNumber.has_value();
    std::vector<gid_t> member;
    while (const struct group* gr = ::fgetgrent(gf.get())) {
        if (!gidNumber && !group.empty() && group == gr->gr_name) {
            id->gid = gr->gr_gid;
            groupFound = true;
        }
        for (char** m = gr->gr_mem; m && *m; ++m)
            if (!userName.empty() && userName == *m) member.push_back(gr->gr_gid);
    }
    // As getgrouplist(3): the task's group first, then the user's others.
    id->groups.assign(1, id->gid);
    for (gid_t g : member)
        if (g != id->gid) id->groups.push_back(g);
    if (!groupFound) return makeError(common::errors::kUnknownUser, "group '" + group + "' does not exist in " + groupFile);
    return *id;
}

}  // namespace taskscope::common
