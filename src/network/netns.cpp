#include "network/netns.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/files.hpp"
#include "common/unique_fd.hpp"
#include "common/error_names.hpp"

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

namespace taskscope::network {

namespace {

// iproute2's way: the directory is a shared mount point, so a namespace
// mounted on a file in it shows in every mount namespace that shares it.
common::Result<void> prepareDir(const std::string& dir) {
    if (auto r = common::makeDirs(dir, 0755); !r) return r;
    if (::mount("", dir.c_str(), "none", MS_SHARED | MS_REC, nullptr) == 0) return {};
    if (errno != EINVAL) return common::errnoError("make " + dir + " a shared mount", errno);
    if (::mount(dir.c_str(), dir.c_str(), "none", MS_BIND | MS_REC, nullptr) < 0)
        return common::errnoError("bind mount " + dir + " on itself", errno);
    if (::mount("", dir.c_str(), "none", MS_SHARED | MS_REC, nullptr) < 0)
        return common::errnoError("make " + dir + " a shared mount", errno);
    return {};
}

// In the child, after unshare: the loopback of a new namespace is down.
int loopbackUp() {
    const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) return errno;
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    int err = 0;
    if (::ioctl(s, SIOCGIFFLAGS, &ifr) < 0) err = errno;
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    if (!err && ::ioctl(s, SIOCSIFFLAGS, &ifr) < 0) err = errno;
    ::close(s);
    return err;
}

}  // namespace

common::Result<void> createNetns(const std::string& dir, const std::string& name) {
    if (auto r = prepareDir(dir); !r) return r;
    const auto path = dir + "/" + name;
    {
        common::UniqueFd f(::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0));
        if (!f && errno == EEXIST) return common::makeError(common::errors::kNetworkExists, "namespace " + path + " exists already");
        if (!f) return common::errnoError("create " + path, errno);
    }
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return common::errnoError("pipe", errno);
    common::UniqueFd r(p[0]), w(p[1]);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::unlink(path.c_str());
        return common::errnoError("fork namespace helper", errno);
    }
    if (pid == 0) {
        // The child's whole life: a step name and errno back, or nothing.
        auto die = [&](char step) {
            const int e = errno;
            char msg[1 + sizeof e];
            msg[0] = step;
            std::memcpy(msg + 1, &e, sizeof e);
            (void)!::write(w.get(), msg, sizeof msg);
            ::_exit(1);
        };
        if (::unshare(CLONE_NEWNET) < 0) die('u');
        if (const int e = loopbackUp()) {
            errno = e;
            die('l');
        }
        if (::mount("/proc/self/ns/net", path.c_str(), "none", MS_BIND, nullptr) < 0) die('m');
        ::_exit(0);
    }
    w.reset();
    char msg[1 + sizeof(int)] = {};
    ssize_t n;
    while ((n = ::read(r.get(), msg, sizeof msg)) < 0 && errno == EINTR) {
    }
    int ws = 0;
    while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    if (n == static_cast<ssize_t>(sizeof msg) || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        int e = 0;
        std::memcpy(&e, msg + 1, sizeof e);
        ::umount2(path.c_str(), MNT_DETACH);
        ::unlink(path.c_str());
        const char* step = msg[0] == 'u' ? "unshare(CLONE_NEWNET)" : msg[0] == 'l' ? "bring up lo" : "bind mount namespace";
        return common::errnoError(std::string("create namespace ") + path + ": " + step, e);
    }
    return {};
}

common::Result<void> removeNetns(const std::string& path) {
    if (::umount2(path.c_str(), MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
        return common::errnoError("unmount " + path, errno);
    if (::unlink(path.c_str()) < 0 && errno != ENOENT) return common::errnoError("remove " + path, errno);
    return {};
}

bool isNetns(const std::string& path) {
    struct statfs fs {};
    return ::statfs(path.c_str(), &fs) == 0 && static_cast<unsigned long>(fs.f_type) == NSFS_MAGIC;
}

}  // namespace taskscope::network
