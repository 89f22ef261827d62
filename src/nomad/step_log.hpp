#pragma once
// Debug timing of the driver's calls, for the overhead measure of issue 16
// (plugin StartTask against taskscope's own). Off unless the environment
// asks for it (TASKSCOPE_NOMAD_LOG=debug; Nomad's client passes its
// environment on to the plugins it starts). A line is one hclog JSON
// record on stderr, which go-plugin reads as the plugin's log at the
// level it names: times in microseconds of CLOCK_MONOTONIC, so a caller
// on the same host can place the call's steps against its own clock.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace taskscope::nomad {

/// Whether debug records are written (read once from the environment).
bool debugLogging();

/// The steps of one call: each step() notes the time since the previous
/// one; done() writes the record (nothing at all when debug is off).
class StepLog {
public:
    explicit StepLog(const char* call);
    void step(const char* name);
    void note(const char* name, const std::string& value);
    void done(const std::string& taskId);

private:
    static int64_t nowUs();
    bool on_;
    const char* call_;
    int64_t start_ = 0, last_ = 0;
    std::vector<std::pair<const char*, int64_t>> steps_;
    std::vector<std::pair<const char*, std::string>> notes_;
};

}  // namespace taskscope::nomad
