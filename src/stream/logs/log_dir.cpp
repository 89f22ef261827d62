#include "stream/logs/log_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "common/unique_fd.hpp"

namespace taskscope::stream::logs {

common::Result<std::optional<size_t>> removeLogDir(const std::string& dir) {
    // O_NOFOLLOW: a symlink put in place of the directory must not lead us elsewhere.
    common::UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return std::optional<size_t>{};
        return common::errnoError("open " + dir, errno);
    }
    // Names first, then unlink: unlinking while readdir runs may skip entries.
    std::vector<std::string> names;
    {
        DIR* d = ::fdopendir(::dup(fd.get()));
        if (!d) return common::errnoError("read " + dir, errno);
        while (const dirent* e = ::readdir(d)) {
            const std::string name = e->d_name;
            if (name != "." && name != "..") names.push_back(name);
        }
        ::closedir(d);
    }
    size_t removed = 0;
    for (const auto& name : names) {
        if (::unlinkat(fd.get(), name.c_str(), 0) == 0) {
            ++removed;
            continue;
        }
        if (errno == ENOENT) continue;
        return common::errnoError("remove " + dir + "/" + name, errno);
    }
    if (::rmdir(dir.c_str()) < 0 && errno != ENOENT) return common::errnoError("remove " + dir, errno);
    return std::optional<size_t>{removed};
}

}  // namespace taskscope::stream::logs
