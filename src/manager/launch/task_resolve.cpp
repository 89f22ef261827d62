// A spec resolved on this node when its start begins (task_resolve.hpp):
// users and groups, the executable on PATH, the working directory.
#include "manager/launch/task_resolve.hpp"

#include <algorithm>

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/default_path.hpp"
#include "common/error_names.hpp"
#include "common/identity.hpp"

namespace taskscope::manager {

namespace {

using common::makeError;
using common::Result;
using spec::invalid;

using common::kDefaultPath;

Result<std::string> findExecutable(const std::string& command, const std::string& pathVar) {
    auto isExecutable = [](const std::string& p) {
        struct stat st {};
        return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
    };
    if (command.find('/') != std::string::npos) {
        if (command.front() != '/') return invalid("command '" + command + "' must be absolute or a bare name");
        if (isExecutable(command)) return command;
        return makeError(common::errors::kNoSuchBinary, "command " + command + " is not an executable file");
    }
    size_t start = 0;
    while (start <= pathVar.size()) {
        auto end = pathVar.find(':', start);
        if (end == std::string::npos) end = pathVar.size();
        const auto dir = pathVar.substr(start, end - start);
        if (!dir.empty() && isExecutable(dir + "/" + command)) return dir + "/" + command;
        start = end + 1;
    }
    return makeError(common::errors::kNoSuchBinary, "command '" + command + "' not found in PATH " + pathVar);
}

}  // namespace

Result<void> resolveTaskSpec(spec::TaskSpec& spec) {
    // An isolated task's user is looked up in its root once that is known
    // (resolveRootIdentity), not in the host's databases.
    if (!spec.isolation.filesystem) {
        auto id = common::resolveIdentity(spec.effectiveUser(), spec.group);
        if (!id) return id.error();
        spec.uid = id->uid;
        spec.gid = id->gid;
        spec.groups = std::move(id->groups);
        if (auto r = checkDeniedIds(spec); !r) return r;
    }

    if (!spec.env.count("PATH")) spec.env["PATH"] = kDefaultPath;
    auto path = findExecutable(spec.command, spec.env["PATH"]);
    if (!path) return path.error();
    spec.path = *path;

    // An isolated task's cwd is a path in its root, which only exists once
    // the shim built it: the shim's chdir step reports a missing one.
    if (spec.isolation.filesystem) return {};
    struct stat st {};
    if (::stat(spec.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return invalid("cwd " + spec.cwd + " is not a directory");
    return {};
}

Result<void> resolveRootIdentity(spec::TaskSpec& spec) {
    if (!spec.isolation.filesystem) return {};
    // The root's /etc is the host's when chroot_env binds it there, else
    // the task dir's own etc/ (a per-task chroot_env without /etc).
    const auto& env = spec.isolation.chrootEnv.value_or(std::vector<std::string>{});
    const bool hostEtc = std::find(env.begin(), env.end(), "/etc") != env.end();
    const auto etc = hostEtc ? std::string("/etc") : spec.isolation.taskDir + "/etc";
    // A root without a user database still has root, and the default
    // nobody its overflow IDs; any other name needs the database.
    const bool root = spec.effectiveUser() == "root", defaultNobody = spec.user.empty();
    struct stat st {};
    if ((root || defaultNobody) && spec.group.empty() && ::stat((etc + "/passwd").c_str(), &st) != 0) {
        spec.uid = root ? 0 : spec::kNobodyId;
        spec.gid = root ? 0 : spec::kNobodyId;
        spec.groups = root ? std::vector<gid_t>{0} : std::vector<gid_t>{};
        return checkDeniedIds(spec);
    }
    auto id = common::resolveIdentityIn(etc, spec.effectiveUser(), spec.group);
    if (!id) return id.error();
    spec.uid = id->uid;
    spec.gid = id->gid;
    spec.groups = std::move(id->groups);
    return checkDeniedIds(spec);
}

Result<void> checkDeniedIds(const spec::TaskSpec& spec) {
    const auto who = "user '" + spec.effectiveUser() + "'";
    if (spec.deniedUids.contains(spec.uid))
        return makeError(common::errors::kDeniedUser, who + " is UID " + std::to_string(spec.uid) +
                                                          ", which denied_uids (" + spec.deniedUids.text() +
                                                          ") does not allow");
    std::vector<gid_t> gids = spec.groups;
    gids.insert(gids.begin(), spec.gid);
    for (gid_t g : gids)
        if (spec.deniedGids.contains(g))
            return makeError(common::errors::kDeniedUser, who + " has group GID " + std::to_string(g) +
                                                              ", which denied_gids (" + spec.deniedGids.text() +
                                                              ") does not allow");
    return {};
}

}  // namespace taskscope::manager
