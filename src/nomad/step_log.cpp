// The driver's per-call debug timing (step_log.hpp).
#include "nomad/step_log.hpp"

#include "nomad/plugin_log.hpp"

#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

namespace taskscope::nomad {

bool debugLogging() {
    static const bool on = [] {
        const char* v = std::getenv("TASKSCOPE_NOMAD_LOG");
        return v && (std::strcmp(v, "debug") == 0 || std::strcmp(v, "trace") == 0);
    }();
    return on;
}

int64_t StepLog::nowUs() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

StepLog::StepLog(const char* call) : on_(debugLogging()), call_(call) {
    if (on_) start_ = last_ = nowUs();
}

void StepLog::step(const char* name) {
    if (!on_) return;
    const int64_t now = nowUs();
    steps_.emplace_back(name, now - last_);
    last_ = now;
}

void StepLog::note(const char* name, const std::string& value) {
    if (on_) notes_.emplace_back(name, value);
}

void StepLog::done(const std::string& taskId) {
    if (!on_) return;
    const int64_t end = nowUs();
    char stamp[40];
    timespec wall{};
    ::clock_gettime(CLOCK_REALTIME, &wall);
    tm t{};
    ::gmtime_r(&wall.tv_sec, &t);
    const size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &t);
    std::snprintf(stamp + n, sizeof stamp - n, ".%06ldZ", wall.tv_nsec / 1000);
    nlohmann::json line = {{"@level", "debug"},
                           {"@message", std::string(call_) + " steps"},
                           {"@timestamp", stamp},
                           {"task_id", taskId},
                           {"mono_start_us", start_},
                           {"total_us", end - start_}};
    for (const auto& [name, us] : steps_) line[std::string(name) + "_us"] = us;
    for (const auto& [name, value] : notes_) line[name] = value;
    writeLogRecord(line.dump() + "\n");
}

}  // namespace taskscope::nomad
