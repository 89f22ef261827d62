#include "common/identity.hpp"

#include <grp.h>
#include <pwd.h>

namespace taskscope::common {

Result<Identity> resolveIdentity(const std::string& user, const std::string& group) {
    // getpwnam_r/getgrnam_r with fixed buffers would truncate on large group
    // databases; both daemons are single-threaded, so the plain calls are safe.
    const passwd* pw = ::getpwnam(user.c_str());
    if (pw == nullptr) return makeError("UnknownUser", "user '" + user + "' does not exist");
    Identity id;
    id.uid = pw->pw_uid;
    id.gid = pw->pw_gid;
    const std::string userName = pw->pw_name;
    if (!group.empty()) {
        const struct group* gr = ::getgrnam(group.c_str());
        if (gr == nullptr) return makeError("UnknownUser", "group '" + group + "' does not exist");
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

}  // namespace taskscope::common
