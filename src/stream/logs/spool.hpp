#pragma once
// The spool directory taskscope-manager fills (see manager/log_spool.hpp,
// the contract): per task <unit>.stdout, <unit>.stderr (fifos),
// <unit>.release (the fifo its shim waits on, holding the other two, until
// they are drained) and <unit>.json, the description, replaced atomically.

#include <string>
#include <vector>

#include "common/result.hpp"

namespace taskscope::stream::logs {

inline constexpr const char* kStreams[] = {"stdout", "stderr"};

/// What <unit>.json says.
struct TaskLogs {
    std::string unit;
    std::string allocId;
    std::string task;
    std::string logDir;
    int maxFiles = 10;
    int maxFileSizeMb = 10;
    bool exited = false;
};

/// Parses a description; InvalidArgument when it is not one.
common::Result<TaskLogs> parseDescription(const std::string& unit, const std::string& json);
std::string describe(const TaskLogs& t);

class Spool {
public:
    explicit Spool(std::string dir) : dir_(std::move(dir)) {}

    const std::string& dir() const { return dir_; }
    std::string description(const std::string& unit) const { return dir_ + "/" + unit + ".json"; }
    std::string fifo(const std::string& unit, const std::string& stream) const {
        return dir_ + "/" + unit + "." + stream;
    }
    common::Result<TaskLogs> load(const std::string& unit) const;
    /// Units that have a description now.
    std::vector<std::string> units() const;
    /// Releases the shim's hold on a drained task's fifos and deletes its
    /// files.
    void remove(const std::string& unit) const;

private:
    std::string dir_;
};

/// The unit of a spool file name ("a1-web.scope.json" -> "a1-web.scope"),
/// or "" when the name is not a description.
std::string unitOfDescription(const std::string& fileName);

}  // namespace taskscope::stream::logs
