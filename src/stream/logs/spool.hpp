#pragma once
// The spool directory taskscope-manager fills (see manager/records/log_spool.hpp,
// the contract): per task <unit>.stdout, <unit>.stderr (fifos),
// <unit>.release (the fifo its shim waits on, holding the other two, until
// they are drained) and <unit>.json, the description, replaced atomically.

#include <string>
#include <vector>

#include "common/result.hpp"
#include "wire/spool.hpp"

namespace taskscope::stream::logs {

inline constexpr const auto& kStreams = wire::kSpoolStreams;

/// What <unit>.json says (wire/spool.hpp), and whose it is.
struct TaskLogs : wire::SpoolDescription {
    std::string unit;
};

/// Parses a description; InvalidArgument when it is not one.
common::Result<TaskLogs> parseDescription(const std::string& unit, const std::string& json);
std::string describe(const TaskLogs& t);

class Spool {
public:
    explicit Spool(std::string dir) : dir_(std::move(dir)) {}

    const std::string& dir() const { return dir_; }
    std::string description(const std::string& unit) const {
        return wire::spoolFile(dir_, unit, wire::kSpoolDescription);
    }
    std::string fifo(const std::string& unit, const std::string& stream) const {
        return wire::spoolFile(dir_, unit, stream);
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

using wire::unitOfDescription;

}  // namespace taskscope::stream::logs
